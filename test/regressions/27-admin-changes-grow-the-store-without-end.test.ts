// Runs once: every server here names its own store.
import { readFile } from 'node:fs/promises'
import { createClient } from '@redis/client'
import { expect, it } from 'vitest'
import { MAX_CHANGES_BETWEEN_STATES } from '../../src/model/store.ts'
import { startRedis } from '../_redis.ts'
import { startServer, tempDataFile } from '../_servers.ts'

// Once an admin change stored only what it changed, nothing made a whole
// state any more but a reset: a sandbox that a team moves the clock of in
// every test and never resets grew its data file, and its Redis log, by a
// line per change for ever, and each replica read them all at start. Past
// MAX_CHANGES_BETWEEN_STATES changes, the next write is a whole state now.

const advance = (url: string) =>
  fetch(`${url}/__sandbox/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ advance_seconds: 1 }),
  })

const clockOf = async (url: string): Promise<string> =>
  ((await (await fetch(`${url}/__sandbox/clock`)).json()) as { now: string })
    .now

/** Moves the clock `times` times, one change after another. */
async function advanceTimes(url: string, times: number): Promise<void> {
  for (let n = 0; n < times; n++) expect((await advance(url)).status).toBe(200)
}

it('keeps the data file to a snapshot and fewer lines than the bound, however often the clock moves', async () => {
  const file = await tempDataFile('cts-admin-bound-')
  const options = { seed: 1, customersPerAccount: 0, dataFile: file }
  const server = await startServer(options)
  await advanceTimes(server.url, MAX_CHANGES_BETWEEN_STATES + 5)
  const changes = (await readFile(file, 'utf8'))
    .split('\n')
    .filter((line) => line.startsWith('{"set":'))
  // The snapshot written at the bound holds the changes before it.
  expect(changes.length).toBeLessThanOrEqual(5)
  const moved = await clockOf(server.url)
  await server.close()
  const again = await startServer(options)
  expect(await clockOf(again.url)).toBe(moved)
  // @note A thousand fsync'ed appends: seconds on a busy disk.
}, 60_000)

it('keeps the Redis log bounded however often the clock moves, and every replica on the moved clock', async () => {
  const redis = await startRedis()
  const store = { url: redis.url, namespace: 'admin-bound' }
  const options = { seed: 1, customersPerAccount: 0, store }
  const moving = await startServer(options)
  const other = await startServer(options)
  await advanceTimes(moving.url, 2 * MAX_CHANGES_BETWEEN_STATES + 5)

  const client = createClient({ url: redis.url }).on('error', () => {})
  await client.connect()
  // A whole state at each bound; a whole state drops what came before the
  // previous one, so the log holds less than two bounds' worth.
  const length = await client.lLen('{admin-bound}:log')
  client.destroy()
  expect(length).toBeLessThanOrEqual(MAX_CHANGES_BETWEEN_STATES + 10)
  const moved = await clockOf(moving.url)
  expect(await clockOf(other.url)).toBe(moved)
  const fresh = await startServer(options)
  expect(await clockOf(fresh.url)).toBe(moved)
}, 60_000)
