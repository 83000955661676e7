// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { storageUnavailable } from '../../src/request/storage-errors.ts'
import { startRedis } from '../_redis.ts'
import { postCustomer, startServer } from '../_servers.ts'

// A Redis that keeps its connections open but answers nothing (a stopped
// process, a partition that drops packets) held every request of a replica,
// the health check's too, for as long as it lasted: nothing bounded a store
// call but the connection's own timeout, which applies to connecting only.
// A store call now waits the store's timeout at most (3 s), then answers
// 503 with Retry-After; health says degraded at once from then on; and the
// replica recovers by itself, losing and duplicating nothing.

/** Every call here gives up after this long, so that a hang fails the test. */
const PATIENCE_MS = 10_000

const post = (url: string, key: string) =>
  postCustomer(
    url,
    { name: 'Held', email: 'held@example.com' },
    {
      headers: { 'idempotency-key': key },
      signal: AbortSignal.timeout(PATIENCE_MS),
    },
  )

const get = (url: string, path: string) =>
  fetch(`${url}${path}`, { signal: AbortSignal.timeout(PATIENCE_MS) })

it('answers 503 within the store timeout while Redis answers nothing, says degraded, and recovers without a duplicate', async () => {
  const redis = await startRedis()
  const server = await startServer({
    seed: 1,
    customersPerAccount: 0,
    store: { url: redis.url, namespace: 'hung' },
  })
  expect((await get(server.url, '/__sandbox/health')).status).toBe(200)
  redis.pause()
  const held = await post(server.url, 'held-1')
  expect(held.status).toBe(503)
  expect(held.headers.get('retry-after')).toMatch(/^\d+$/)
  const problem = (await held.json()) as { code: string; detail: string }
  expect(problem.code).toBe('storage_unavailable')
  // The catch-up read before deciding went unanswered: nothing was decided.
  expect(problem.detail).toMatch(/REDIS_TIMEOUT.*nothing was changed/)

  const health = await get(server.url, '/__sandbox/health')
  expect(health.status).toBe(503)
  expect(await health.json()).toMatchObject({
    status: 'degraded',
    storage: { code: 'REDIS_TIMEOUT' },
  })
  expect((await get(server.url, '/__sandbox/state')).status).toBe(503)

  redis.resume()
  let status = 0
  for (const started = Date.now(); Date.now() - started < PATIENCE_MS;) {
    status = (await get(server.url, '/__sandbox/health')).status
    if (status === 200) break
    await new Promise((done) => setTimeout(done, 100))
  }
  expect(status).toBe(200)

  const retried = await post(server.url, 'held-1')
  expect(retried.status).toBe(201)
  const state = (await (await get(server.url, '/__sandbox/state')).json()) as {
    customers: { email: string }[]
  }
  expect(
    state.customers.filter((customer) => customer.email === 'held@example.com'),
  ).toHaveLength(1)
}, 40_000)

it('says that a write sent to Redis and never answered may or may not be stored, and how to learn which', () => {
  const unanswered = Object.assign(new Error('answered nothing'), {
    code: 'REDIS_TIMEOUT',
    unsettled: true,
  })
  const problem = storageUnavailable(unanswered, {
    outage: {
      where: 'in its Redis store',
      until: 'Redis takes writes again',
      code: 'REDIS_UNAVAILABLE',
    },
  })
  expect(problem.code).toBe('storage_unavailable')
  expect(problem.message).toMatch(
    /\(REDIS_TIMEOUT\), so it may or may not be stored: retry it with the same Idempotency-Key/,
  )
  expect(problem.message).not.toMatch(/nothing was changed/)
})
