// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { emptyFleet, postCustomer, postJson } from '../_servers.ts'

// Found by an outside tester, near `limits.records` on Redis, where
// replicas reserve records before they append them to an account's list:
// a keyed create answered 201 by one replica, sent again to another that
// held the account from before, was refused 409 limit_reached every time,
// decided on a copy without the key; and an account added through
// /__sandbox/api-keys was counted without a check, past the limit. The
// retry now reads the account's list before the limit refuses it (and is
// replayed), and an added account and key reserve their two records, or
// are refused.

const mintToken = (url: string) =>
  postJson(url, '/v2/tokens', { scopes: ['customers:write'] }, DEMO_KEY_ONE)

it('replays a keyed create on another replica near limits.records, and refuses an account past it', async () => {
  // 11 seeded records (3 accounts, 8 API keys), no customers.
  const { start } = await emptyFleet('near-the-limit', {
    limits: { records: 14 },
  })
  const a = await start()
  const b = await start()
  // B holds account one from before the create.
  expect((await mintToken(b.url)).status).toBe(201)

  const keyed = (url: string) =>
    postCustomer(
      url,
      { name: 'Once', email: 'once@example.com' },
      { headers: { 'idempotency-key': 'near-limit-1' } },
    )
  const created = await keyed(a.url)
  expect(created.status).toBe(201)
  const { id } = (await created.json()) as { id: string }
  // The last record the limit allows, from A: B's copy is as before.
  expect((await mintToken(a.url)).status).toBe(201)
  for (let retry = 0; retry < 3; retry++) {
    const replayed = await keyed(b.url)
    expect(replayed.status).toBe(201)
    expect(replayed.headers.get('idempotent-replayed')).toBe('true')
    expect(((await replayed.json()) as { id: string }).id).toBe(id)
  }

  // 14 records now; a replica that loaded no account counts the 11 of the
  // last whole state: an account and its key would make 16 in the fleet.
  const c = await start()
  const added = await postJson(c.url, '/__sandbox/api-keys', {
    account_name: 'Past the limit',
  })
  expect(added.status).toBe(409)
  const problem = (await added.json()) as { code: string; detail: string }
  expect(problem.code).toBe('limit_reached')
  expect(problem.detail).toContain('limits.records (14)')
  const state = (await (await fetch(`${b.url}/__sandbox/state`)).json()) as {
    accounts: unknown[]
  }
  expect(state.accounts).toHaveLength(3)
}, 30_000)
