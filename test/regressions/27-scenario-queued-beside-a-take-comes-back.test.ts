// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { startRedis } from '../_redis.ts'
import { startServer } from '../_servers.ts'

// Found by the fleet's property test: a scenario queued on a replica while
// one of its own requests took another stored the queue whole, as that
// replica held it, and a replica applies its own take only once stored:
// the queue stored after the take still held the scenario taken, so it
// came back on every replica (a fault taken twice), and the replica that
// took it, applying its take after, then held one scenario fewer than the
// others. A change of the sandbox's own API now waits for the takes under
// way on its replica, and no take starts while it is stored.

it('queues a scenario beside a take on the same replica without bringing the taken one back', async () => {
  const redis = await startRedis()
  const diverged: string[] = []
  for (let round = 0; round < 20; round++) {
    const options = {
      seed: 1,
      customersPerAccount: 0,
      store: { url: redis.url, namespace: `taken-${round}` },
    }
    const replicas = [await startServer(options), await startServer(options)]
    const [a] = replicas
    const post = (path: string, body: unknown, headers = {}) =>
      fetch(`${a!.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      })
    const fault = { operation: 'createCustomer', status: 503 }
    expect(
      (await post('/__sandbox/scenarios', { ...fault, times: 1 })).status,
    ).toBe(201)
    // The create takes the fault queued; the second fault is queued meanwhile.
    const [queued, created] = await Promise.all([
      post('/__sandbox/scenarios', { ...fault, times: 2 }),
      post(
        '/v1/customers',
        { name: 'Ada', email: 'ada@example.com' },
        { authorization: `Bearer ${DEMO_KEY_ONE}` },
      ),
    ])
    expect(queued.status).toBe(201)
    expect(created.status).toBe(503)
    const left = await Promise.all(
      replicas.map(async (replica) => {
        const listed = await fetch(`${replica.url}/__sandbox/scenarios`)
        const { scenarios } = (await listed.json()) as {
          scenarios: { remaining: number }[]
        }
        return scenarios.reduce((sum, s) => sum + s.remaining, 0)
      }),
    )
    // Three queued, one taken: two left, on every replica.
    if (left.some((count) => count !== 2))
      diverged.push(`round ${round}: ${left.join(' and ')} left`)
    await Promise.all(replicas.map((replica) => replica.close()))
  }
  expect(diverged).toEqual([])
}, 60_000)
