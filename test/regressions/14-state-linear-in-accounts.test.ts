import { expect, it } from 'vitest'
import { inProcess, send } from '../_targets.ts'

const ACCOUNTS = 20_000

it('answers GET /__sandbox/state with 20,000 accounts, each with its own masked key', async () => {
  const client = await inProcess.start({
    customersPerAccount: 0,
    limits: { accounts: ACCOUNTS + 3 },
  })
  const created: { apiKey: string; accountId: string }[] = []
  for (let i = 0; i < ACCOUNTS; i++) {
    created.push(await client.sandbox.createApiKey())
  }
  const { status, body } = await send(client, 'GET', '/__sandbox/state')
  expect(status).toBe(200)
  // The three fixture accounts come first.
  expect(body.accounts).toHaveLength(ACCOUNTS + 3)
  for (const index of [0, 1, ACCOUNTS / 2, ACCOUNTS - 1]) {
    const { apiKey, accountId } = created[index]!
    const account = body.accounts[index + 3]
    expect(account.id).toBe(accountId)
    expect(account.api_keys).toEqual([
      expect.objectContaining({ key: `sk_test_…${apiKey.slice(-4)}` }),
    ])
  }
  expect(body.accounts[0].api_keys.length).toBeGreaterThan(0)
}, 60_000)
