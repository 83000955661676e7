// Runs once: every server here names its own store.
import { createClient } from '@redis/client'
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { customerNames, postCustomer, startServer } from '../_servers.ts'

// When Redis lost the log (FLUSHALL, a restart without persistence, a
// failover to a replica behind), a replica that only read never noticed:
// Redis answered an empty slice past its end. Replicas then followed
// different histories for good: records answered 201 on one were missing on
// the others, and a keyed retry on another replica made a second record.
// The replica that began the log again could not write either: each write
// counted as decided before another replica's. A replica now notices a log
// shorter than its place, or a last whole state it did not follow, and
// starts again from what Redis holds.

const keyed = (url: string, name: string) =>
  postCustomer(
    url,
    { name, email: `${name.toLowerCase()}@example.com` },
    { headers: { 'idempotency-key': `key-${name}` } },
  )

it('keeps every replica on one history after Redis lost the log, with no keyed retry duplicated', async () => {
  const redis = await startRedis()
  const options = {
    seed: 1,
    customersPerAccount: 0,
    store: { url: redis.url, namespace: 'lost' },
  }
  const replicas = [
    await startServer(options),
    await startServer(options),
    await startServer(options),
  ]
  for (const [at, name] of ['Before1', 'Before2', 'Before3'].entries())
    expect((await keyed(replicas[at]!.url, name)).status).toBe(201)
  for (const replica of replicas) await customerNames(replica.url)

  const client = createClient({ url: redis.url }).on('error', () => {})
  await client.connect()
  await client.flushAll()
  client.destroy()

  const answered: Record<string, string> = {}
  for (let n = 0; n < 9; n++) {
    const name = `After${n}`
    const response = await keyed(replicas[n % 3]!.url, name)
    expect(response.status).toBe(201)
    answered[name] = ((await response.json()) as { id: string }).id
  }
  const views = await Promise.all(
    replicas.map((replica) => customerNames(replica.url)),
  )
  expect(views[1]).toEqual(views[0])
  expect(views[2]).toEqual(views[0])
  expect(views[0]).toEqual(expect.arrayContaining(Object.keys(answered)))
  // A keyed retry on another replica replays the record, and makes none.
  for (const [n, [name, id]] of Object.entries(answered).entries()) {
    const retried = await keyed(replicas[(n + 1) % 3]!.url, name)
    expect(retried.status).toBe(201)
    expect(((await retried.json()) as { id: string }).id).toBe(id)
  }
  const after = await customerNames(replicas[0]!.url)
  expect(after.filter((name) => name.startsWith('After'))).toHaveLength(9)
})
