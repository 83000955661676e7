import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'

// The accounts' own scenario queues shared one cap, limits.scenarios (1,000):
// one account that queued faults in a loop took all of it, and every other
// account's POST /__sandbox/account/scenarios was refused.

/** `POST /__sandbox/account/scenarios` as the account of `apiKey`. */
const queue = (sandbox: ReturnType<typeof createSandbox>, apiKey: string) =>
  sandbox.fetch(
    new Request('http://x.test/__sandbox/account/scenarios', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ operation: 'createCustomer', status: 503 }),
    }),
  )

it('refuses an account its 101st queued scenario with 409 limit_reached naming limits.scenariosPerAccount, and another account still queues', async () => {
  const sandbox = createSandbox({ seed: 1 })
  await sandbox.ready
  const greedy = await sandbox.createApiKey()
  const other = await sandbox.createApiKey()
  for (let i = 0; i < 100; i++)
    expect((await queue(sandbox, greedy.apiKey)).status).toBe(201)

  const refused = await queue(sandbox, greedy.apiKey)
  expect(refused.status).toBe(409)
  const problem = (await refused.json()) as { code: string; detail: string }
  expect(problem.code).toBe('limit_reached')
  expect(problem.detail).toContain('limits.scenariosPerAccount (100)')
  expect(problem.detail).toContain('DELETE /__sandbox/account/scenarios')
  expect(sandbox.account(greedy.accountId).scenarios.list()).toHaveLength(100)

  expect((await queue(sandbox, other.apiKey)).status).toBe(201)
})

it('takes the per-account share from limits.scenariosPerAccount, and still bounds all accounts together by limits.scenarios', async () => {
  const sandbox = createSandbox({
    seed: 1,
    limits: { scenarios: 3, scenariosPerAccount: 2 },
  })
  await sandbox.ready
  const [a, b] = [await sandbox.createApiKey(), await sandbox.createApiKey()]
  const next = (accountId: string) =>
    sandbox.account(accountId).scenarios.next('*', { status: 503 })
  next(a.accountId)
  next(a.accountId)
  expect(() => next(a.accountId)).toThrow(/limits\.scenariosPerAccount \(2\)/)
  next(b.accountId)
  expect(() => next(b.accountId)).toThrow(/limits\.scenarios \(3\)/)
})
