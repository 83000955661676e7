// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { startRedis } from '../_redis.ts'
import { postCustomer, startServer } from '../_servers.ts'

// With Redis stopped, a read (GET /__sandbox/state, /clock, /requests, an
// API GET) answered 503 "The sandbox could not store this write … so
// nothing was changed": no write was sent. A read now says that it could
// not read the store to answer from current state; a write keeps its words.

it('words a read it cannot bring up to date as a read, and a write as a write', async () => {
  const redis = await startRedis()
  const server = await startServer({
    seed: 1,
    customersPerAccount: 0,
    store: { url: redis.url, namespace: 'reads' },
  })
  expect((await fetch(`${server.url}/__sandbox/health`)).status).toBe(200)
  await redis.kill('SIGTERM')

  const reads = [
    fetch(`${server.url}/__sandbox/state`),
    fetch(`${server.url}/__sandbox/clock`),
    fetch(`${server.url}/__sandbox/requests`),
    fetch(`${server.url}/v1/customers`, {
      headers: { authorization: `Bearer ${DEMO_KEY_ONE}` },
    }),
  ]
  for (const response of await Promise.all(reads)) {
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toMatch(/^\d+$/)
    const { code, detail } = (await response.json()) as {
      code: string
      detail: string
    }
    expect(code).toBe('storage_unavailable')
    expect(detail).toMatch(
      /^The sandbox could not read its Redis store \(REDIS_\w+\) to answer from current state; retry once Redis answers again;/,
    )
    expect(detail).not.toMatch(/write|nothing was changed/)
  }

  const write = await postCustomer(server.url, {
    name: 'Ada',
    email: 'ada@example.com',
  })
  expect(write.status).toBe(503)
  expect(((await write.json()) as { detail: string }).detail).toMatch(
    /could not store this write in its Redis store .*nothing was changed/,
  )
}, 30_000)
