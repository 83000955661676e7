// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { startHoldingProxy } from '../_proxy.ts'
import { startRedis } from '../_redis.ts'
import { postJson, startServer, tokenIds } from '../_servers.ts'

// Found by the fleet property test on a Redis Cluster (a resharding cut
// the connection): a reset that another replica's write outran is decided
// again after the replica catches up. When that catch-up failed (Redis
// away for a moment), the replica kept the reset in its own copy, which
// Redis never stored, and went on applying the others' writes on top of
// it: its own token, stored and answered 201 before the reset, was gone
// from its answers for good, while every other replica served it.

it('puts back what Redis holds after a reset that was outrun and then cut off', async () => {
  const redis = await startRedis()
  const proxy = await startHoldingProxy(redis.url)
  const namespace = 'outrun-reset'
  const options = { seed: 1, customersPerAccount: 0 }
  const cut = await startServer({
    ...options,
    store: { url: proxy.url, namespace },
  })
  const other = await startServer({
    ...options,
    store: { url: redis.url, namespace },
  })

  // A token stored through the replica that resets next.
  const token = await postJson(
    cut.url,
    '/v2/tokens',
    { scopes: ['customers:write'] },
    DEMO_KEY_ONE,
  )
  expect(token.status).toBe(201)
  const { id } = (await token.json()) as { id: string }

  // While the reset's state is on its way to Redis, the other replica
  // queues a fault, which the reset was decided without: it is outrun.
  // Then Redis is gone before the replica could catch up: the state goes
  // on, and the proxy cuts every connection once Redis answered it.
  let fault = 0
  const held = proxy.hold((chunk) => chunk.includes('{"state":'))
  void held.reached.then(async () => {
    fault = (
      await postJson(other.url, '/__sandbox/scenarios', {
        operation: 'createCustomer',
        status: 503,
        times: 1,
      })
    ).status
    held.release({ cutAfterAnswer: true })
  })
  const reset = await postJson(cut.url, '/__sandbox/reset', {})
  expect(fault).toBe(201)
  expect(proxy.isDown()).toBe(true)
  expect(reset.status).toBe(503)
  expect(((await reset.json()) as { code: string }).code).toBe(
    'storage_unavailable',
  )

  // Redis is back: the replica serves what the fleet stored, its own token
  // among it, as the other replica does.
  proxy.restore()
  let health = 503
  for (let tries = 0; health !== 200 && tries < 100; tries++) {
    await new Promise((done) => setTimeout(done, 100))
    health = (await fetch(`${cut.url}/__sandbox/health`)).status
  }
  expect(health).toBe(200)
  expect(await tokenIds(other.url)).toEqual([id])
  expect(await tokenIds(cut.url)).toEqual([id])
}, 30_000)
