// Runs once: every server here names its own store.
import { createClient } from '@redis/client'
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { createNamed, startServer } from '../_servers.ts'

// A Redis that answered but refused every write (out of memory under
// `maxmemory`, a read-only replica, a failing disk) made each write a 503
// that blamed an unreachable Redis and sent the reader to a health check
// that said "ok". Such a refusal is now the store's fault until a write is
// taken again: health says degraded and names Redis's own reason, reads go
// on, and writes come back by themselves.

it('says degraded with the reason while Redis refuses writes, keeps reads, and writes again once Redis takes them', async () => {
  const redis = await startRedis()
  const server = await startServer({
    seed: 1,
    customersPerAccount: 0,
    rateLimit: { limit: 100, windowSeconds: 60 },
    store: { url: redis.url, namespace: 'refusing' },
  })
  // Without a rate limit, the refused write is the append itself. A
  // sandbox of its own: a replica with other rules is refused by the fleet.
  const unlimited = await startServer({
    seed: 1,
    customersPerAccount: 0,
    store: { url: redis.url, namespace: 'refusing-unlimited' },
  })
  const client = createClient({ url: redis.url }).on('error', () => {})
  await client.connect()
  expect((await createNamed(server.url, 'Before')).status).toBe(201)

  await client.configSet({ maxmemory: '1', 'maxmemory-policy': 'noeviction' })
  for (const [url, name] of [
    [server.url, 'Refused'],
    [unlimited.url, 'Again'],
  ] as const) {
    const refused = await createNamed(url, name)
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/)
    const problem = (await refused.json()) as { code: string; detail: string }
    expect(problem.code).toBe('storage_unavailable')
    expect(problem.detail).toMatch(/\(REDIS_OOM\), so nothing was changed/)
  }
  for (const url of [server.url, unlimited.url]) {
    const health = await fetch(`${url}/__sandbox/health`)
    expect(health.status).toBe(503)
    expect(await health.json()).toMatchObject({
      status: 'degraded',
      storage: {
        code: 'REDIS_OOM',
        message: expect.stringMatching(/maxmemory/),
      },
    })
  }
  const state = await fetch(`${server.url}/__sandbox/state`)
  expect(state.status).toBe(200)
  const { customers } = (await state.json()) as {
    customers: { name: string }[]
  }
  expect(customers.map((customer) => customer.name)).toEqual(['Before'])

  await client.configSet('maxmemory', '0')
  client.destroy()
  for (const [url, name] of [
    [server.url, 'After'],
    [unlimited.url, 'Later'],
  ] as const) {
    expect((await createNamed(url, name)).status).toBe(201)
    expect((await fetch(`${url}/__sandbox/health`)).status).toBe(200)
  }
})
