// Runs once: every server here names its own store.
import { createClient } from '@redis/client'
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { startServer } from '../_servers.ts'

// A Redis log whose entry is not JSON (the namespace's key written by
// something else) stopped a replica at start with "log … moved on 5 times
// while this replica read it": it had not moved at all. The start now says
// which entry it cannot read.

it('names the entry it cannot read when the log at start holds one that is not JSON', async () => {
  const redis = await startRedis()
  const client = createClient({ url: redis.url }).on('error', () => {})
  await client.connect()
  await client.rPush('{foreign}:log', 'garbage{')
  client.destroy()
  const started = await startServer({
    seed: 1,
    customersPerAccount: 0,
    store: { url: redis.url, namespace: 'foreign' },
  }).catch((error: Error) => error)
  expect(started).toBeInstanceOf(Error)
  const { message } = started as Error
  expect(message).toMatch(/log entry 0 is not JSON/)
  expect(message).not.toMatch(/moved on/)
})
