// Runs once: every server here names its own store.
import { createClient } from '@redis/client'
import { expect, it } from 'vitest'
import { commandStats, startRedisCluster } from '../_redis.ts'
import {
  customerNames,
  postCustomer,
  postJson,
  startServer,
} from '../_servers.ts'

// Every key of a sandbox shared its namespace as hash tag, so a Redis
// Cluster kept one sandbox on one node: every write of every account went
// through the one log there, and the cluster's other nodes took none of
// it. Each account now keeps its records and writes in a list of its own,
// under its own hash tag (`{ns:account}`), appended with a compare-and-swap
// on that list alone: the cluster spreads one sandbox's accounts, and their
// writes, over its nodes.

it("spreads one sandbox's accounts and their writes over the nodes of a Redis Cluster", async () => {
  const { nodes } = await startRedisCluster(3)
  const options = { seed: 1, customersPerAccount: 0 }
  const replica = await startServer({
    ...options,
    store: { url: nodes[0]!.url, namespace: 'spread' },
  })
  const keys: string[] = []
  for (let n = 0; n < 8; n++) {
    const made = await postJson(replica.url, '/__sandbox/api-keys', {
      account_name: `Team ${n}`,
    })
    expect(made.status).toBe(201)
    keys.push(((await made.json()) as { api_key: string }).api_key)
  }

  // The node that holds the sandbox's own keys (its log), and what each
  // node ran so far.
  const clients = await Promise.all(
    nodes.map(async ({ url }) => {
      const client = createClient({ url }).on('error', () => {})
      await client.connect()
      return client
    }),
  )
  try {
    const own = await Promise.all(
      clients.map(async (client) => (await client.keys('{spread}:*')).length),
    )
    const home = own.findIndex((count) => count > 0)
    expect(own.filter((count) => count > 0)).toHaveLength(1)
    const before = await Promise.all(nodes.map(({ url }) => commandStats(url)))

    const names: string[] = []
    for (const [at, key] of keys.entries())
      for (let n = 0; n < 3; n++) {
        const name = `T${at}C${n}`
        names.push(name)
        const created = await postCustomer(
          replica.url,
          { name, email: `${name.toLowerCase()}@example.com` },
          { headers: { authorization: `Bearer ${key}` } },
        )
        expect(created.status).toBe(201)
      }

    // Each account's list is on the node its own tag names, with its
    // records; the lists of the sandbox's accounts sit on several nodes.
    const lists = await Promise.all(
      clients.map((client) => client.keys('{spread:*}:g:*')),
    )
    expect(lists.filter((held) => held.length > 0).length).toBeGreaterThan(1)
    expect(lists.flat()).toHaveLength(3 + keys.length)
    const storedOn = [0, 0, 0]
    for (const [at, client] of clients.entries())
      for (const list of lists[at]!)
        for (const entry of await client.lRange(list, 0, -1))
          if (entry.includes('"customer"')) storedOn[at]!++
    expect(storedOn.reduce((sum, n) => sum + n, 0)).toBe(names.length)

    // The creates ran on the nodes of their accounts: each node other than
    // the log's pushed the records it holds (the log's node also pushes
    // the journal's entries).
    const after = await Promise.all(nodes.map(({ url }) => commandStats(url)))
    const pushed = after.map(
      (calls, at) => (calls.rpush ?? 0) - (before[at]!.rpush ?? 0),
    )
    const others = [0, 1, 2].filter((at) => at !== home)
    expect(others.map((at) => pushed[at])).toEqual(
      others.map((at) => storedOn[at]),
    )
    expect(others.some((at) => storedOn[at]! > 0)).toBe(true)

    // A replica started on another node serves them all.
    const other = await startServer({
      ...options,
      store: { url: nodes[2]!.url, namespace: 'spread' },
    })
    expect((await customerNames(other.url)).toSorted()).toEqual(
      names.toSorted(),
    )
  } finally {
    for (const client of clients) client.destroy()
  }
}, 60_000)
