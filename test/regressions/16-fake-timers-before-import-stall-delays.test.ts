import { afterEach, expect, it, vi } from 'vitest'

// With fake timers installed before the package was loaded (vi.useFakeTimers()
// in a setup file), the sandbox took the fake setTimeout for the real one:
// every delay (a scenario's delay_ms, the latency option, the slow persona)
// waited for timers the test never advanced, and the request never answered.

afterEach(() => {
  vi.useRealTimers()
  vi.resetModules()
})

it('answers a delayed request when fake timers were installed before the sandbox loaded', async () => {
  vi.useFakeTimers()
  vi.resetModules()
  const { createSandbox } = await import('../../src/index.ts')
  const { DEMO_KEY_ONE } = await import('../../src/fixtures.ts')
  const sandbox = createSandbox({ seed: 1, latency: { min: 1, max: 1 } })
  await sandbox.ready
  sandbox.scenarios.next('createCustomer', { delayMs: 5 })
  const response = await sandbox.fetch(
    new Request('http://api.test/v1/customers', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${DEMO_KEY_ONE}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
    }),
  )
  expect(response.status).toBe(201)
  expect(sandbox.journal.last()).toMatchObject({ scenario: 'delay_ms=5' })
})
