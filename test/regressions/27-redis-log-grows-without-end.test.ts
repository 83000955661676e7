// Runs once: every server here names its own store.
import { createClient } from '@redis/client'
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { createNamed, startServer } from '../_servers.ts'

// The Redis store kept every entry of its log for ever: each reset or
// other admin change appends the whole state, and a team's sandbox that
// resets between test runs grew by a whole data set each time, until Redis
// ran out of memory. A whole state now drops what came before the previous
// one: the log holds what a replica one whole state behind still needs.

const reset = (url: string) =>
  fetch(`${url}/__sandbox/reset`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })

const names = async (url: string): Promise<string[]> => {
  const state = (await (await fetch(`${url}/__sandbox/state`)).json()) as {
    customers: { name: string }[]
  }
  return state.customers.map((customer) => customer.name).toSorted()
}

it('keeps the Redis log from the previous whole state on, and every replica, new or left behind, serves what it holds', async () => {
  const redis = await startRedis()
  const store = { url: redis.url, namespace: 'bounded' }
  const options = { seed: 1, customersPerAccount: 0, store }
  const busy = await startServer(options)
  // Started now and asked nothing until the end: two whole states behind.
  const idle = await startServer(options)

  for (let round = 1; round <= 3; round++) {
    for (let n = 1; n <= 5; n++)
      expect((await createNamed(busy.url, `R${round}N${n}`)).status).toBe(201)
    expect((await reset(busy.url)).status).toBe(200)
  }
  expect((await createNamed(busy.url, 'Last')).status).toBe(201)

  const client = createClient({ url: redis.url }).on('error', () => {})
  await client.connect()
  const log = await client.lRange('{bounded}:log', 0, -1)
  const dropped = Number(await client.get('{bounded}:log-base'))
  // The previous whole state (the second reset) and the last reset's: the
  // creates are in their account's list, not in the log.
  expect(log).toHaveLength(2)
  expect(log[0]).toMatch(/^\{"state":/)
  expect(log[1]).toMatch(/^\{"state":/)
  // The first replica's seeded state and the first reset's.
  expect(dropped).toBe(2)
  // The lists of the generations the resets left go too, each account's
  // under its own tag: only the current generation's stay.
  const gen = await client.get('{bounded}:gen')
  const stale = async () =>
    (await client.keys('{bounded:*}:g:*')).filter(
      (key) => !key.endsWith(`:g:${gen}`),
    )
  for (
    const started = Date.now();
    (await stale()).length > 0 && Date.now() - started < 5000;
  )
    await new Promise((done) => setTimeout(done, 50))
  expect(await stale()).toEqual([])
  expect(await client.keys(`{bounded:*}:g:${gen}`)).toHaveLength(3)
  client.destroy()

  const fresh = await startServer(options)
  for (const server of [busy, idle, fresh])
    expect(await names(server.url)).toEqual(['Last'])
  // The replica that was left behind writes again, from the log's state.
  expect((await createNamed(idle.url, 'Idle')).status).toBe(201)
  expect(await names(fresh.url)).toEqual(['Idle', 'Last'])
})
