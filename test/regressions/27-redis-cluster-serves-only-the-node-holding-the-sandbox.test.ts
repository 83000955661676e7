// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { startRedisCluster } from '../_redis.ts'
import {
  customerNames,
  postCustomer,
  runCli,
  startServer,
} from '../_servers.ts'

// On a Redis Cluster (a managed Redis in cluster mode), a replica worked
// only when its URL happened to name the node holding the sandbox's slot:
// pointed at any other node it did not start ("MOVED 4748 …"), and a
// resharding or failover that moved the slot while it served would have
// left it answering 503 for good. Every sandbox also shared one slot
// (`{sandbox}`), whatever its namespace. A replica now finds the cluster
// from any node, follows the sandbox's slot wherever it moves, and each
// namespace is a hash tag of its own. While the slot moves, a write that
// Redis asks to try again (TRYAGAIN) answers 503 with Retry-After and
// stores nothing.

/** One replica of the sandbox `namespace` on each node, none seeded with customers. */
async function replicasOn(nodes: { url: string }[], namespace: string) {
  const replicas = []
  for (const node of nodes)
    replicas.push(
      await startServer({
        seed: 1,
        customersPerAccount: 0,
        store: { url: node.url, namespace },
      }),
    )
  return replicas
}

const keyed = (url: string, name: string) =>
  postCustomer(
    url,
    { name, email: `${name.toLowerCase()}@example.com` },
    { headers: { 'idempotency-key': `key-${name}` } },
  )

it('serves one sandbox from replicas pointed at different nodes of a Redis Cluster, with keyed retries replayed across them', async () => {
  const { nodes } = await startRedisCluster(3)
  const replicas = await replicasOn(nodes, 'team-a')
  const ids: Record<string, string> = {}
  for (const [at, replica] of replicas.entries()) {
    const response = await keyed(replica.url, `Node${at}`)
    expect(response.status).toBe(201)
    ids[`Node${at}`] = ((await response.json()) as { id: string }).id
  }
  for (const replica of replicas)
    expect((await customerNames(replica.url)).toSorted()).toEqual(
      Object.keys(ids),
    )
  for (const [at, [name, id]] of Object.entries(ids).entries()) {
    const retried = await keyed(replicas[(at + 1) % 3]!.url, name)
    expect(retried.status).toBe(201)
    expect(((await retried.json()) as { id: string }).id).toBe(id)
  }
  expect((await customerNames(replicas[0]!.url)).length).toBe(3)
}, 60_000)

it('keeps serving, with every 201 kept, while a resharding moves the sandbox to another node', async () => {
  const cluster = await startRedisCluster(3)
  const replicas = await replicasOn(cluster.nodes, 'moving')
  const acknowledged: string[] = []
  const statuses = new Set<number>()
  let n = 0
  const moving = new AbortController()
  const load = async (replica: { url: string }) => {
    while (!moving.signal.aborted) {
      const name = `Moved${n++}`
      const response = await keyed(replica.url, name)
      statuses.add(response.status)
      if (response.status === 201) acknowledged.push(name)
      else expect(response.headers.get('retry-after')).not.toBeNull()
    }
  }
  const answered = async (count: number) => {
    while (acknowledged.length < count)
      await new Promise((done) => setTimeout(done, 10))
  }
  const loads = replicas.map(load)
  await answered(6)
  const moved = await cluster.moveSlotOf('{moving}')
  expect(moved.to).not.toBe(moved.from)
  // Writes go on through the replicas once the slot is on its new node.
  await answered(acknowledged.length + 6)
  moving.abort()
  await Promise.all(loads)
  expect([...statuses].filter((status) => status !== 503)).toEqual([201])
  // After the move, every replica writes and sees every acknowledged record.
  for (const [at, replica] of replicas.entries())
    expect((await keyed(replica.url, `After${at}`)).status).toBe(201)
  for (const replica of replicas) {
    const names = await customerNames(replica.url)
    expect(names).toEqual(expect.arrayContaining(acknowledged))
    expect(new Set(names).size).toBe(names.length)
  }
}, 60_000)

it('says in one line that a Redis Cluster has database 0 only, where it named another', async () => {
  const { nodes } = await startRedisCluster(3)
  const cli = runCli([
    '--port',
    '0',
    '--store',
    nodes[1]!.url.replace(/\/0$/, '/3'),
  ])
  expect(await cli.exited).toBe(1)
  expect(cli.stderr().trim()).toBe(
    `customer-token-sandbox: The Redis store at ${nodes[1]!.url.replace(/\/0$/, '/3')} is a Redis Cluster, which has database 0 only: give the URL without a database (or with /0).`,
  )
}, 60_000)
