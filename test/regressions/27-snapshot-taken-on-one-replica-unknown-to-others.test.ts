// Runs once: every server here names its own store.
import { createClient } from '@redis/client'
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { createNamed, customerNames, startServer } from '../_servers.ts'

// A named snapshot stayed in the replica that took it: behind the fleet's
// load balancer, POST /__sandbox/snapshots/restore reached another replica
// and answered 404, and each replica kept limits.snapshots of its own. The
// fleet's store now keeps the snapshots: any replica lists and restores
// them, and the limit counts them all.

const send = async (url: string, path: string, body?: unknown) => {
  const answer = await fetch(`${url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    ...(body !== undefined && {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  })
  return { status: answer.status, body: (await answer.json()) as any }
}

it('restores on any replica a snapshot another took, and counts the limit across the fleet', async () => {
  const redis = await startRedis()
  const options = {
    seed: 1,
    customersPerAccount: 0,
    limits: { snapshots: 2 },
    store: { url: redis.url, namespace: 'snapshots' },
  }
  const first = await startServer(options)
  const second = await startServer(options)
  expect((await createNamed(first.url, 'Kept')).status).toBe(201)

  const taken = await send(first.url, '/__sandbox/snapshots', {
    name: 'before',
  })
  expect(taken.status).toBe(201)
  expect(taken.body).toMatchObject({ name: 'before', customers: 1 })
  expect((await createNamed(second.url, 'Dropped')).status).toBe(201)

  const listed = await send(second.url, '/__sandbox/snapshots')
  expect(listed.status).toBe(200)
  expect(listed.body.snapshots).toEqual([taken.body])
  const restored = await send(second.url, '/__sandbox/snapshots/restore', {
    name: 'before',
  })
  expect(restored.status).toBe(200)
  for (const { url } of [first, second])
    expect(await customerNames(url)).toEqual(['Kept'])

  // Two kept in the fleet: a third is refused on either replica, and one
  // of a kept name replaces it.
  expect(
    (await send(second.url, '/__sandbox/snapshots', { name: 'after' })).status,
  ).toBe(201)
  const third = await send(first.url, '/__sandbox/snapshots', { name: 'third' })
  expect(third.status).toBe(409)
  expect(third.body.code).toBe('limit_reached')
  expect(
    (await send(first.url, '/__sandbox/snapshots', { name: 'before' })).status,
  ).toBe(201)
  expect(
    (await send(first.url, '/__sandbox/snapshots')).body.snapshots.map(
      (s: { name: string }) => s.name,
    ),
  ).toEqual(['before', 'after'])

  // A snapshot no replica took is none, on any of them.
  const missing = await send(second.url, '/__sandbox/snapshots/restore', {
    name: 'never',
  })
  expect(missing.status).toBe(404)

  // What a hand edit left in Redis is no snapshot: said, and not listed.
  const client = createClient({ url: redis.url }).on('error', () => {})
  await client.connect()
  await client.hSet('{snapshots}:snapshot-data', 'after', 'not json')
  const damaged = await send(first.url, '/__sandbox/snapshots/restore', {
    name: 'after',
  })
  expect(damaged.status).toBe(404)
  expect(damaged.body.detail).toContain('not a snapshot this sandbox wrote')
  await client.hSet('{snapshots}:snapshots', 'after', '{"name":1}')
  client.destroy()
  expect(
    (await send(second.url, '/__sandbox/snapshots')).body.snapshots.map(
      (s: { name: string }) => s.name,
    ),
  ).toEqual(['before'])
  expect(await customerNames(first.url)).toEqual(['Kept'])
})
