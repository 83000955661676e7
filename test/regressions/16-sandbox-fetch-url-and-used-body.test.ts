import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'

// sandbox.fetch('http://…') threw "Cannot read properties of undefined
// (reading 'indexOf')", and a Request whose body was already read (one
// Request sent twice) got 500 internal_error, "a bug in the sandbox".

const init = (): RequestInit => ({
  method: 'POST',
  headers: {
    authorization: `Bearer ${DEMO_KEY_ONE}`,
    'content-type': 'application/json',
  },
  body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
})

it('takes a URL and its init as fetch does', async () => {
  const sandbox = createSandbox({ seed: 1 })
  await sandbox.ready
  const health = await sandbox.fetch('http://api.test/__sandbox/health')
  expect(health.status).toBe(200)
  const created = await sandbox.fetch(
    new URL('http://api.test/v1/customers'),
    init(),
  )
  expect(created.status).toBe(201)
})

it('rejects a Request whose body was already read, as fetch does, and stores nothing', async () => {
  const sandbox = createSandbox({ seed: 1 })
  await sandbox.ready
  const count = sandbox.customers.count()
  const request = new Request('http://api.test/v1/customers', init())
  expect((await sandbox.fetch(request)).status).toBe(201)
  await expect(sandbox.fetch(request)).rejects.toThrow(
    'Failed to answer a request through sandbox.fetch: its body was already read. Pass a new Request each time, or request.clone() before reading it.',
  )
  expect(sandbox.customers.count()).toBe(count + 1)
})
