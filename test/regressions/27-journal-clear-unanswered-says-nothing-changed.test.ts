// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { startHoldingProxy } from '../_proxy.ts'
import { startRedis } from '../_redis.ts'
import { postCustomer, startServer } from '../_servers.ts'

// DELETE /__sandbox/requests whose command Redis never answered (a stall,
// a partition) answered 503 "nothing was changed. Retry once Redis takes
// writes again": the command was sent, and Redis may have run it. The
// fleet's journal is cleared as a write now, whose 503 says it may or may
// not be done and to read it back.

it('says a journal clear Redis did not answer may or may not be done', async () => {
  const redis = await startRedis()
  const proxy = await startHoldingProxy(redis.url)
  // The store's timeout (3 s) shortened, as the store takes it: a
  // variable, as no option of the server names it.
  const store = { url: proxy.url, namespace: 'stalled', timeoutMs: 500 }
  const replica = await startServer({ seed: 1, customersPerAccount: 0, store })
  expect(
    (await postCustomer(replica.url, { name: 'Ada', email: 'a@example.com' }))
      .status,
  ).toBe(201)

  // Redis stops answering once the clear went out.
  proxy.hold((chunk) => chunk.includes('\r\nDEL\r\n'))
  const cleared = await fetch(`${replica.url}/__sandbox/requests`, {
    method: 'DELETE',
  })
  expect(cleared.status).toBe(503)
  expect(cleared.headers.get('retry-after')).toMatch(/^\d+$/)
  const { detail } = (await cleared.json()) as { detail: string }
  expect(detail).toContain('(REDIS_TIMEOUT), so it may or may not be stored')
  expect(detail).toContain('read it back')
  expect(detail).not.toContain('nothing was changed')
  // The replica is still up, and says why.
  expect((await fetch(`${replica.url}/__sandbox/health`)).status).toBe(503)
}, 30_000)
