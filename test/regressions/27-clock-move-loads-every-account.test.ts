// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { startServer } from '../_servers.ts'

// A replica on Redis loaded every account's customers and tokens before any
// call of the sandbox's own API, a clock move or a look at the journal as
// much as a reset: one poll of GET /__sandbox/clock by a dashboard held the
// whole data set in every replica it reached. Only the calls that read or
// change customers and tokens load them now.

it('answers the clock, scenario, latency and journal calls without loading an account', async () => {
  const redis = await startRedis()
  const options = {
    seed: 1,
    customersPerAccount: 50,
    store: { url: redis.url, namespace: 'admin-load' },
  }
  const first = await startServer(options)
  const second = await startServer(options)
  const send = async (method: string, path: string, body?: unknown) => {
    const answer = await fetch(`${second.url}${path}`, {
      method,
      ...(body === undefined
        ? {}
        : {
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
          }),
    })
    await answer.body?.cancel()
    return answer.status
  }

  expect(await send('POST', '/__sandbox/clock', { advance_seconds: 60 })).toBe(
    200,
  )
  expect(await send('GET', '/__sandbox/clock')).toBe(200)
  expect(
    await send('POST', '/__sandbox/scenarios', {
      operation: 'createCustomer',
      status: 503,
    }),
  ).toBe(201)
  expect(await send('DELETE', '/__sandbox/scenarios')).toBe(204)
  expect(
    await send('POST', '/__sandbox/latency', { min_ms: 0, max_ms: 1 }),
  ).toBe(200)
  expect(await send('GET', '/__sandbox/requests')).toBe(200)
  expect(second.sandbox.db.customers.count()).toBe(0)
  // The clock moved on the second replica is the first's too.
  const clocks = await Promise.all(
    [first, second].map(
      async ({ url }) =>
        (
          (await (await fetch(`${url}/__sandbox/clock`)).json()) as {
            now: string
          }
        ).now,
    ),
  )
  expect(new Set(clocks).size).toBe(1)

  // A call that reads the records loads them all.
  expect(await send('GET', '/__sandbox/state')).toBe(200)
  expect(second.sandbox.db.customers.count()).toBe(
    first.sandbox.db.customers.count(),
  )
})
