// Runs once: every server here names its own store.
import { createClient } from '@redis/client'
import { expect, it } from 'vitest'
import { startRedisCluster } from '../_redis.ts'
import { customerNames, postCustomer, startServer } from '../_servers.ts'

// A whole state keeps its records in keys of its own generation, which the
// script that stores the next state drops by names it makes itself. On a
// Redis Cluster a script may touch only keys of the node it runs on: a
// reset through one replica replaces every replica's records, and the old
// generation's keys are gone, with every key in the sandbox's one slot.

it('resets every replica on a Redis Cluster, and leaves only the new generation', async () => {
  const { nodes } = await startRedisCluster(3)
  const options = (url: string) => ({
    seed: 1,
    customersPerAccount: 5,
    store: { url, namespace: 'gens' },
  })
  const a = await startServer(options(nodes[0]!.url))
  const b = await startServer(options(nodes[1]!.url))
  expect(
    (await postCustomer(b.url, { name: 'Before', email: 'b@example.com' }))
      .status,
  ).toBe(201)
  expect(await customerNames(a.url)).toContain('Before')

  const reset = await fetch(`${a.url}/__sandbox/reset`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ seed: 2 }),
  })
  expect(reset.status).toBe(200)
  const after = await customerNames(b.url)
  expect(after).not.toContain('Before')
  expect(after.toSorted()).toEqual((await customerNames(a.url)).toSorted())
  expect(after.length).toBe(10)

  const cluster = createClient({ url: nodes[0]!.url }).on('error', () => {})
  await cluster.connect()
  const slot = Number(
    await cluster.sendCommand(['CLUSTER', 'KEYSLOT', '{gens}']),
  )
  const owner = (
    (await cluster.sendCommand(['CLUSTER', 'SLOTS'])) as [
      number,
      number,
      [string, number],
    ][]
  ).find(([from, to]) => from <= slot && slot <= to)!
  cluster.destroy()
  const node = createClient({
    url: `redis://${owner[2][0]}:${owner[2][1]}`,
  }).on('error', () => {})
  await node.connect()
  const generations = new Set(
    (await node.keys('{gens}:g:*')).map((key) => key.split(':')[2]),
  )
  const current = await node.get('{gens}:gen')
  node.destroy()
  expect([...generations]).toEqual([current])
}, 60_000)
