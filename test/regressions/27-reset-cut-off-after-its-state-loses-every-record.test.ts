// Runs once: every server here names its own store.
import { expect, it, vi } from 'vitest'
import {
  createNamed,
  customerNames,
  emptyFleet,
  postJson,
} from '../_servers.ts'

// Found by an outside tester: a whole state (a reset, an upgrade's first
// start) writes each account's list under the account's own tag with an
// expiry, stores the state, then makes the lists last. Cut off between the
// two (a kill -9, a connection lost), the state was current, the records of
// before were gone with their generation, and the new lists expired two
// minutes on: a replica started after that answered 503 REDIS_LOST_RECORDS
// for every account, until a reset wiped the data. The lists now wait a
// day, the next start makes them last, and it drops the generation left.

// @note Answers the next whole state's script with an error once Redis ran
// it: the replica stops there, as one killed just after would.
let cutAfterState = false
vi.mock('@redis/client', async (original) => {
  const { aroundScripts } = await import('../_around-scripts.ts')
  return aroundScripts(await original(), async (send, [, options]) => {
    if (!cutAfterState || !options.arguments[1]?.startsWith('{"state":'))
      return send()
    cutAfterState = false
    await send()
    throw new Error('cut off after the state was stored')
  })
})

it('keeps the lists of a whole state cut off once stored, for the next start to make last', async () => {
  const { start, client } = await emptyFleet('cut-after', {
    customersPerAccount: 2,
  })
  const first = await start()
  expect((await createNamed(first.url, 'Before')).status).toBe(201)
  const before = await client.get('{cut-after}:gen')

  cutAfterState = true
  const reset = await postJson(first.url, '/__sandbox/reset', { seed: 2 })
  expect(reset.status).toBe(503)
  const current = await client.get('{cut-after}:gen')
  expect(current).not.toBe(before)
  const lists = await client.keys(`{cut-after:*}:g:${current}`)
  expect(lists).toHaveLength(3)
  // Far longer than a replica takes to start again.
  for (const list of lists)
    expect(await client.pTTL(list)).toBeGreaterThan(3_600_000)

  await first.close()
  const next = await start()
  expect(await customerNames(next.url)).toHaveLength(4)
  for (const list of lists) expect(await client.pTTL(list)).toBe(-1)
  // The generation the state left goes at that start too.
  const left = async () => client.keys(`{cut-after:*}:g:${before}`)
  for (let waited = 0; (await left()).length > 0 && waited < 50; waited++)
    await new Promise((done) => setTimeout(done, 100))
  expect(await left()).toEqual([])
}, 30_000)
