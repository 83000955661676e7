// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { startRedisCluster } from '../_redis.ts'
import { postCustomer, replicaOnCluster } from '../_servers.ts'

// On a Redis Cluster, DELETE /__sandbox/requests sent while a resharding
// moved the sandbox's slot answered 500 internal_error ("a bug in the
// sandbox"): Redis refused to delete the journal and its marks, one of
// them moved and the other not yet (TRYAGAIN), and nothing turned a
// refusal of the fleet's journal into the store's 503. Reading and
// clearing the fleet's journal now answer 503 storage_unavailable with
// Retry-After, as the store's other calls do, and the retry is served.

it('answers 503 with Retry-After to a journal clear while the slot moves, and clears it on the retry', async () => {
  const cluster = await startRedisCluster(3)
  const replica = await replicaOnCluster(cluster, 'journal')
  expect(
    (
      await fetch(`${replica.url}/__sandbox/account/requests`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${DEMO_KEY_ONE}` },
      })
    ).status,
  ).toBe(204)
  const created = await postCustomer(replica.url, {
    name: 'Ada',
    email: 'ada@example.com',
  })
  expect(created.status).toBe(201)

  // The journal on the next node, its marks still on this one.
  const moving = await cluster.startMovingSlotOf('{journal}', [
    '{journal}:journal',
  ])
  const clear = () =>
    fetch(`${replica.url}/__sandbox/requests`, { method: 'DELETE' })
  const refused = await clear()
  expect(refused.status).toBe(503)
  expect(refused.headers.get('retry-after')).toMatch(/^\d+$/)
  expect(await refused.json()).toMatchObject({
    code: 'storage_unavailable',
    detail: expect.stringContaining('(REDIS_TRYAGAIN), so nothing was changed'),
  })

  await moving.finish()
  expect((await clear()).status).toBe(204)
  const { requests } = (await (
    await fetch(`${replica.url}/__sandbox/requests`)
  ).json()) as { requests: { path: string }[] }
  expect(requests.map((entry) => entry.path)).not.toContain('/v1/customers')
}, 60_000)
