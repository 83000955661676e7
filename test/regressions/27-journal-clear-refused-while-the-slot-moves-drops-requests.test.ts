// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { startRedisCluster } from '../_redis.ts'
import { createInFlight, replicaOnCluster } from '../_servers.ts'

// Found by the fleet property test on a Redis Cluster at width 24: a
// DELETE /__sandbox/requests that Redis refused while a resharding moved
// the sandbox's slot (TRYAGAIN) answered 503 "nothing was changed", and
// yet its replica put back the whole state Redis holds at its next
// request, as if a reset of its own had not been stored. Every request it
// was answering then answered 503 saying that another replica had stored
// a whole new state (a reset, a restore), which none had, and was left out
// of the journal. A journal clear changes nothing in the replica's copy:
// refused, it now leaves the replica as it was (a reset's clear still puts
// back what Redis holds).

it('answers a create in flight 201 after a journal clear beside it was refused while the slot moved', async () => {
  const cluster = await startRedisCluster(3)
  const replica = await replicaOnCluster(cluster, 'cleared')
  const create = await createInFlight(replica.url)

  // The journal on the next node, its marks (none yet) on this one: Redis
  // asks to try the delete of both again.
  const moving = await cluster.startMovingSlotOf('{cleared}', [
    '{cleared}:journal',
  ])
  const refused = await fetch(`${replica.url}/__sandbox/requests`, {
    method: 'DELETE',
  })
  expect(refused.status).toBe(503)
  expect(((await refused.json()) as { detail: string }).detail).toContain(
    'REDIS_TRYAGAIN',
  )
  await moving.finish()
  expect((await fetch(`${replica.url}/__sandbox/clock`)).status).toBe(200)

  await create.answered()
}, 60_000)
