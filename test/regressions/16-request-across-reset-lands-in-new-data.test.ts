import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'

// A request still being answered when reset() ran (a slow call a test left
// behind, or one its client aborted) used to write its customer into the
// fresh data, record itself in the fresh journal and take the first id of
// the fresh id stream: the next test started with a record it never made.

const createCustomer = (
  sandbox: ReturnType<typeof createSandbox>,
  headers: Record<string, string> = {},
) =>
  sandbox.fetch(
    new Request('http://api.test/v1/customers', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${DEMO_KEY_ONE}`,
        'content-type': 'application/json',
        ...headers,
      },
      body: JSON.stringify({ name: 'Left behind', email: 'left@example.com' }),
    }),
  )

const firstIdAfterReset = async (): Promise<string> => {
  const sandbox = createSandbox({ seed: 1 })
  await sandbox.reset()
  return (await (await createCustomer(sandbox)).json()).id
}

for (const [what, change] of [
  ['reset()', (sandbox) => sandbox.reset()],
  [
    'restore()',
    async (sandbox) => {
      await sandbox.snapshot('before')
      return sandbox.restore('before')
    },
  ],
] as const satisfies readonly [
  string,
  (sandbox: ReturnType<typeof createSandbox>) => Promise<void>,
][]) {
  it(`drops a request still being answered when ${what} runs, leaving the new data, journal and ids untouched`, async () => {
    const sandbox = createSandbox({ seed: 1 })
    await sandbox.ready
    const countBefore = sandbox.customers.count()
    const pending = createCustomer(sandbox, {
      'x-sandbox-scenario': 'delay_ms=20',
    })
    await change(sandbox)
    const dropped = await pending
    expect(dropped.type).toBe('error')
    expect(sandbox.customers.count()).toBe(countBefore)
    expect(sandbox.journal.list()).toEqual([])

    const next = await createCustomer(sandbox)
    expect(next.status).toBe(201)
    if (what === 'reset()') {
      expect((await next.json()).id).toBe(await firstIdAfterReset())
    }
    expect(sandbox.journal.list()).toHaveLength(1)
  })
}

it('leaves the Idempotency-Key of a request dropped by a reset free for its retry', async () => {
  const sandbox = createSandbox({ seed: 1 })
  await sandbox.ready
  const key = { 'idempotency-key': 'retry-me' }
  const pending = createCustomer(sandbox, key)
  await sandbox.reset()
  expect((await pending).type).toBe('error')

  const retry = await createCustomer(sandbox, key)
  expect(retry.status).toBe(201)
  const replay = await createCustomer(sandbox, key)
  expect(replay.status).toBe(201)
  expect(replay.headers.get('idempotent-replayed')).toBe('true')
  expect(
    sandbox.customers
      .list({ accountId: 'acct_DemoAccount001' })
      .filter((c) => c.name === 'Left behind'),
  ).toHaveLength(1)
})
