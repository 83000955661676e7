// Runs once: every server here names its own store.
import { createCluster } from '@redis/client'
import { expect, it } from 'vitest'
import { startRedisCluster } from '../_redis.ts'
import { createInFlight, postJson, replicaOnCluster } from '../_servers.ts'

// Found by the fleet property test on a Redis Cluster: an admin change (a
// clock moved) that Redis refused while a resharding moved the sandbox's
// slot (TRYAGAIN) was taken back, and yet the replica put back the whole
// state Redis holds at its next request. Every request it was answering
// then answered 503 saying that another replica had stored a whole new
// state (a reset, a restore), which none had, and was left out of the
// journal. A change taken back when it is refused now leaves the replica
// to catch up, as one that another replica outran does.

it('answers a create in flight 201 after an admin change beside it was refused while the slot moved', async () => {
  const cluster = await startRedisCluster(3)
  const replica = await replicaOnCluster(cluster, 'refused')
  const create = await createInFlight(replica.url)

  // The slot starts to move, the index of tokens moved first: the write of
  // a clock move names it beside keys that did not move (a read of the log
  // does not), and Redis asks to try again.
  const client = createCluster({ rootNodes: [{ url: cluster.nodes[0]!.url }] })
  await client.connect()
  const gen = await client.get('{refused}:gen')
  client.destroy()
  const moving = await cluster.startMovingSlotOf('{refused}', [
    `{refused}:g:${gen}:tokens`,
  ])
  const refused = await postJson(replica.url, '/__sandbox/clock', {
    advance_seconds: 60,
  })
  expect(refused.status).toBe(503)
  expect(((await refused.json()) as { detail: string }).detail).toContain(
    'REDIS_TRYAGAIN',
  )
  await moving.finish()
  expect((await fetch(`${replica.url}/__sandbox/clock`)).status).toBe(200)

  await create.answered()
}, 60_000)
