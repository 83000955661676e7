// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { createNamed, startServer } from '../_servers.ts'

// On Redis, POST /__sandbox/reset cleared each replica's own copy but not
// what the fleet keeps beside the state: the journal still listed the calls
// before the reset, and a credential over its rate limit stayed limited,
// where one server starts both again, as the reference says.

it('empties the fleet journal and starts the rate limits again on a reset through any replica', async () => {
  const redis = await startRedis()
  const options = {
    seed: 1,
    customersPerAccount: 0,
    rateLimit: { limit: 2, windowSeconds: 60 },
    store: { url: redis.url, namespace: 'reset' },
  }
  const [a, b] = [await startServer(options), await startServer(options)]
  expect((await createNamed(a.url, 'One')).status).toBe(201)
  expect((await createNamed(b.url, 'Two')).status).toBe(201)
  expect((await createNamed(a.url, 'Three')).status).toBe(429)
  const before = (await (
    await fetch(`${b.url}/__sandbox/requests`)
  ).json()) as {
    requests: unknown[]
  }
  expect(before.requests).toHaveLength(3)

  const reset = await fetch(`${a.url}/__sandbox/reset`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
  expect(reset.status).toBe(200)
  const after = (await (await fetch(`${b.url}/__sandbox/requests`)).json()) as {
    requests: unknown[]
  }
  expect(after.requests).toEqual([])
  expect((await createNamed(b.url, 'Again')).status).toBe(201)
})
