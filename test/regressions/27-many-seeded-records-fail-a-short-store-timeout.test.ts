// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { createNamed, startServer } from '../_servers.ts'

// The first replica on an empty Redis writes its seeded records into the
// generation's keys, a thousand a command; a reset writes its records so
// too. The store's timeout bounded all of those commands at once, as one
// call: a replica seeded with a hundred thousand customers per account and
// a short timeout failed its start ("answered nothing within 500 ms"),
// though Redis answered every command at once. Each command is bounded on
// its own now.

it('starts and resets with many seeded records under a store timeout each command meets', async () => {
  // As a team's sandbox runs it: an fsync a second, not one per command.
  const redis = await startRedis({ appendfsync: 'everysec' })
  // The store's timeout (3 s) shortened, as the store takes it: no option
  // of the server names it. @note 2 s, not the 500 ms of the report: one
  // command of a thousand records missed 500 ms beside the suite's other
  // workers on 2 cores.
  const store = { url: redis.url, namespace: 'seeded', timeoutMs: 2000 }
  const options = {
    seed: 1,
    customersPerAccount: 100_000,
    limits: { customersPerAccount: 200_000 },
    store,
  }
  const first = await startServer(options)
  expect((await createNamed(first.url, 'Seeded')).status).toBe(201)
  // @note Not asked for an account: loading 100,000 records is one
  // command, which may take longer than this timeout.
  const second = await startServer(options)
  expect((await fetch(`${second.url}/__sandbox/health`)).status).toBe(200)

  const reset = await fetch(`${first.url}/__sandbox/reset`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
  expect(reset.status).toBe(200)
  expect((await createNamed(first.url, 'After')).status).toBe(201)
  for (const server of [first, second])
    expect((await fetch(`${server.url}/__sandbox/health`)).status).toBe(200)
}, 60_000)
