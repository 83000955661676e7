// Runs once: every server here names its own store.
import { createClient } from '@redis/client'
import { expect, it, vi } from 'vitest'
import { DEMO_KEY_ONE, DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'
import { startRedis } from '../_redis.ts'
import { postCustomer, startServer } from '../_servers.ts'

// A replica that follows the Redis log stores a whole state without records
// (a compaction) every so many admin changes, with how many customers and
// tokens each account holds: a replica that starts from it counts those of
// the accounts it has not loaded towards limits.records. The counts were
// what the compacting replica held, and that held the records of its
// writes decided and not stored yet: one that another replica's write had
// outrun was refused, decided again and stored after the state, and so
// counted twice. A replica started later refused a create with 409
// limit_reached one record early (or more). The counts are the log's now.

// @note Compactions every second admin change, not every thousandth.
vi.mock('../../src/model/store.ts', async (original) => ({
  ...(await original<typeof import('../../src/model/store.ts')>()),
  MAX_CHANGES_BETWEEN_STATES: 2,
}))

interface LoggedState {
  state: { accounts: { id: string; name: string }[] }
  gen: string
  counts: Record<string, number>
}

const moveClock = (url: string) =>
  fetch(`${url}/__sandbox/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ advance_seconds: 1 }),
  })

const recordsIn = async (url: string): Promise<number> => {
  const state = (await (await fetch(`${url}/__sandbox/state`)).json()) as {
    accounts: { api_keys: unknown[] }[]
    customers: unknown[]
    tokens: unknown[]
  }
  let records = state.customers.length + state.tokens.length
  for (const account of state.accounts) records += 1 + account.api_keys.length
  return records
}

it('counts the records of an account it has not loaded as the log holds them, after a compaction beside refused writes', async () => {
  const redis = await startRedis()
  const limit = 1500
  const options = {
    seed: 1,
    customersPerAccount: 0,
    limits: { records: limit },
    store: { url: redis.url, namespace: 'counted' },
  }
  const writer = await startServer(options)
  const client = createClient({ url: redis.url }).on('error', () => {})
  await client.connect()
  const log = '{counted}:log'
  // Whether the log's last whole state counts another number of the
  // second account's customers than Redis holds, with the creates after it.
  const miscounted = async (): Promise<boolean> => {
    const entries = await client.lRange(log, 0, -1)
    const at = entries.findLastIndex((text) => text.startsWith('{"state":'))
    const last = JSON.parse(entries[at]!) as LoggedState
    const two = last.state.accounts.find((a) => a.name === 'Demo Account Two')!
    const after = entries
      .slice(at + 1)
      .filter((text) => text.includes(`"account_id":"${two.id}"`)).length
    const held = await client.lLen(`{counted}:g:${last.gen}:a:${two.id}`)
    return (last.counts[two.id] ?? 0) + after !== held
  }

  let made = 0
  // @note Rounds end short of the limit, whose 409 is not this test's: a
  // fast machine makes that many in fewer rounds than a slow one.
  const most = limit - 200
  for (let round = 0; round < 30; round++) {
    if (made >= most || (await miscounted())) break
    // Writes of the second account decided all the time, while an admin
    // change of another replica (written here) lands among them: the
    // writer compacts as it applies it.
    const stop = new AbortController()
    const loop = async (id: number) => {
      for (let n = 0; !stop.signal.aborted && made < most; n++) {
        const response = await postCustomer(
          writer.url,
          { name: 'Race', email: `race-${round}-${id}-${n}@example.com` },
          { headers: { authorization: `Bearer ${DEMO_KEY_TWO}` } },
        )
        expect(response.status).toBe(201)
        made++
      }
    }
    const loops = Array.from({ length: 6 }, (_, id) => loop(id))
    expect((await moveClock(writer.url)).status).toBe(200)
    await new Promise((done) => setTimeout(done, 10))
    await client.rPush(
      log,
      JSON.stringify({
        write: { set: { account_clocks: [] } },
        by: `other:${round}`,
      }),
    )
    await new Promise((done) => setTimeout(done, 20))
    stop.abort()
    await Promise.all(loops)
  }
  expect(made).toBeLessThan(limit)

  // One record short of the limit, then a replica that has loaded nothing.
  for (let n = await recordsIn(writer.url); n < limit - 1; n++) {
    const response = await postCustomer(
      writer.url,
      { name: 'Fill', email: `fill-${n}@example.com` },
      { headers: { authorization: `Bearer ${DEMO_KEY_ONE}` } },
    )
    expect(response.status).toBe(201)
  }
  expect(await recordsIn(writer.url)).toBe(limit - 1)
  const fresh = await startServer(options)
  const last = await postCustomer(
    fresh.url,
    { name: 'Last', email: 'last@example.com' },
    { headers: { authorization: `Bearer ${DEMO_KEY_ONE}` } },
  )
  // @note Refused, it said "The sandbox holds 1502 records": each write
  // refused beside a compaction counted once more.
  expect(last.status, await last.text()).toBe(201)
}, 60_000)
