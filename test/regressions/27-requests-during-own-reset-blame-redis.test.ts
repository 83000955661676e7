// Runs once: every server here names its own store.
import { createClient } from '@redis/client'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { startRedis } from '../_redis.ts'
import { startServer } from '../_servers.ts'

// A replica applies nothing of the others' while it decides and stores a
// reset, and the requests it answers meanwhile wait, as documented. The
// watchdog that bounds each call of Redis counted that wait as Redis
// answering nothing: past the store's timeout (a reset of many records, or
// one that scans a Redis that other sandboxes fill with keys), they
// answered 503 REDIS_TIMEOUT ("Retry once Redis takes writes again",
// Retry-After: 5), though Redis answered every call, and with many records
// the reset's own store failed so too. A wait for the replica's own turn is
// no longer a wait for Redis.

it('answers requests that waited for its own reset without blaming Redis', async () => {
  const redis = await startRedis()
  // Keys of others: the reset's scan of its rate-limit counts takes long,
  // each of its calls answered at once.
  const admin = createClient({ url: redis.url })
  await admin.connect()
  await admin.eval(
    "for i = 1, 600000 do redis.call('SET', 'other:' .. i, '1') end",
  )
  admin.destroy()
  // The store's timeout (3 s) shortened, as the store takes it: a variable,
  // as no option of the server names it.
  const store = { url: redis.url, namespace: 'own-reset', timeoutMs: 250 }
  const server = await startServer({ seed: 1, customersPerAccount: 5, store })
  const stop = new AbortController()
  const answers: string[] = []
  const write = async () => {
    while (!stop.signal.aborted) {
      const response = await fetch(`${server.url}/v1/customers`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${DEMO_KEY_ONE}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ name: 'During', email: 'during@example.com' }),
      })
      const body = (await response.json()) as { code?: string }
      if (response.status !== 201)
        answers.push(
          `${response.status} ${body.code} ${response.headers.get('retry-after')}`,
        )
    }
  }
  const writers = [write(), write()]
  await new Promise((done) => setTimeout(done, 50))
  const reset = await fetch(`${server.url}/__sandbox/reset`, {
    method: 'POST',
  })
  stop.abort()
  await Promise.all(writers)

  expect(reset.status).toBe(200)
  for (const answer of answers) expect(answer).toBe('503 storage_unavailable 1')
}, 60_000)
