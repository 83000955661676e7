// Runs once: every server here names its own store.
import { createClient } from '@redis/client'
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { startServer } from '../_servers.ts'

// While the Redis log held an entry that is not this sandbox's
// (REDIS_BAD_LOG), a reset answered "Retry once Redis takes writes again":
// Redis took writes all along, and no retry, nor the reset itself, reaches
// the entry. The answer now says what ends it.

it('says what mends a log that holds what is not this sandbox’s, to a reset and to a read', async () => {
  const redis = await startRedis()
  const server = await startServer({
    seed: 1,
    customersPerAccount: 0,
    store: { url: redis.url, namespace: 'foreign' },
  })
  const client = createClient({ url: redis.url }).on('error', () => {})
  await client.connect()
  await client.rPush('{foreign}:log', 'garbage{')
  client.destroy()

  for (const response of [
    await fetch(`${server.url}/__sandbox/reset`, { method: 'POST' }),
    await fetch(`${server.url}/__sandbox/state`),
  ]) {
    expect(response.status).toBe(503)
    const { detail } = (await response.json()) as { detail: string }
    expect(detail).toMatch(
      /\(REDIS_BAD_LOG\).*once the log holds only this sandbox's entries again: remove the entry GET \/__sandbox\/health names, or the namespace's keys/,
    )
    expect(detail).not.toMatch(/takes writes again|answers again/)
  }
  const health = (await (
    await fetch(`${server.url}/__sandbox/health`)
  ).json()) as { storage: { message: string } }
  expect(health.storage.message).toMatch(/log entry \d+ is not JSON/)
})
