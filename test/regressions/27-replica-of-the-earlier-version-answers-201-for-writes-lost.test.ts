// Runs once: every server here names its own store.
import { createClient } from '@redis/client'
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { createNamed, postJson, startServer } from '../_servers.ts'

// Found by an outside tester: a replica of the earlier version left running
// beside this one read the log, found an account it held no records of,
// and appended its creates there: answered 201, read by no replica of this
// version, which keeps each account's writes in a list of its own. Every
// entry this version appends now carries `null` for the kind it is not
// (`"state": null` beside a write, `"write": null` beside a state), which
// the earlier version refuses as a log it cannot read (503, REDIS_BAD_LOG),
// storing nothing: its rule, below, is the one it applies.
const earlierVersionReads = (entry: Record<string, unknown>): boolean =>
  'write' in entry !== 'state' in entry

it('appends only entries that a replica of the earlier version refuses to read', async () => {
  const redis = await startRedis()
  const server = await startServer({
    seed: 1,
    store: { url: redis.url, namespace: 'mixed' },
  })
  expect((await createNamed(server.url, 'Kept')).status).toBe(201)
  for (const [path, body] of [
    ['/__sandbox/clock', { advance_seconds: 60 }],
    ['/__sandbox/api-keys', { account_name: 'Later' }],
    ['/__sandbox/reset', { seed: 2 }],
    ['/__sandbox/scenarios', { operation: 'createCustomer', status: 503 }],
  ] as const)
    expect((await postJson(server.url, path, body)).status).toBeLessThan(300)
  const fault = await createNamed(server.url, 'Faulted')
  expect(fault.status).toBe(503)

  const client = createClient({ url: redis.url }).on('error', () => {})
  await client.connect()
  const log = await client.lRange('{mixed}:log', 0, -1)
  client.destroy()
  expect(log.length).toBeGreaterThan(1)
  for (const text of log)
    expect(
      earlierVersionReads(JSON.parse(text) as Record<string, unknown>),
    ).toBe(false)
  // This version reads them, and a replica started from them serves.
  const next = await startServer({
    seed: 1,
    store: { url: redis.url, namespace: 'mixed' },
  })
  const created = await createNamed(next.url, 'After')
  expect(created.status).toBe(201)
}, 30_000)
