// Runs once: every server here names its own store.
import { createClient } from '@redis/client'
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { runCli, startCli } from '../_servers.ts'

// A Redis set to evict any key when full (maxmemory-policy allkeys-lru, as
// a cache often is) took the sandbox like any other: once full, it deleted
// the log, and with it writes every replica had answered 201, while health
// kept saying ok and no replica said a word. Such a Redis is now refused
// at start, in one line naming the policy and what to set instead; one
// that evicts only keys that expire (volatile-lru) still serves.

it('refuses a Redis whose maxmemory-policy evicts any key, and takes one that evicts only keys that expire', async () => {
  const redis = await startRedis()
  const client = createClient({ url: redis.url }).on('error', () => {})
  await client.connect()
  await client.configSet('maxmemory-policy', 'allkeys-lru')

  const refused = runCli(['--port', '0', '--quiet', '--store', redis.url])
  expect(await refused.exited).toBe(1)
  const lines = refused.stderr().trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toContain(`The Redis store at ${redis.url}`)
  expect(lines[0]).toContain('maxmemory-policy allkeys-lru')
  expect(lines[0]).toContain('noeviction')
  expect(await client.exists('{cts}:log')).toBe(0)

  await client.configSet('maxmemory-policy', 'volatile-lru')
  client.destroy()
  const served = await startCli([
    '--port',
    '0',
    '--quiet',
    '--store',
    redis.url,
  ])
  expect((await fetch(`${served.url}/__sandbox/health`)).status).toBe(200)
  expect(await served.stop()).toBe(0)
}, 30_000)
