// A real Redis for a test, on its own port and folder, and the commands it ran.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from '@redis/client'
import { onTestFinished } from 'vitest'
import {
  freePort,
  startRedisServer,
  type RedisServer,
} from '../examples/shared-sandbox/redis.mjs'
import { findRedisServer } from '../scripts/find-redis.mjs'

// @note One launcher for the tests, the bench and the example, so that the
// Redis the end-to-end tests run on is started as a team's sandbox starts it.

/** How to start a Redis for a test. */
export interface RedisOptions {
  /**
   * When Redis fsyncs its append-only file: `always` before it answers a
   * write, `everysec` once a second (what a team's sandbox runs).
   *
   * @default 'always'
   */
  appendfsync?: 'always' | 'everysec'
  /** More arguments for `redis-server` (cluster mode, say). */
  extraArgs?: string[]
}

/** A Redis started by a test, on its own port and folder. */
export interface StartedRedis {
  /** `redis://127.0.0.1:<port>/0`. */
  url: string
  port: number
  /** Its working folder, with the append-only file. */
  dir: string
  /** Sends `signal` (SIGTERM unless told) and resolves once it has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>
  /**
   * Starts it again on the same folder and port, which replays its
   * append-only file (stopping it first with SIGTERM if it still runs).
   */
  restart(): Promise<void>
  /**
   * Stops it with SIGSTOP: it keeps its connections and answers nothing (a
   * stopped process, a partition that drops packets), until `resume()` or
   * the end of the test.
   */
  pause(): void
  /** Lets a paused Redis go on (SIGCONT). */
  resume(): void
  /**
   * Adds an ACL user with `rules` (`['~*', '+@all', '-@dangerous']`) and
   * gives its URL, `redis://<name>:<password>@…`.
   */
  user(name: string, password: string, rules: string[]): Promise<string>
}

/**
 * Starts a real `redis-server` (found as `scripts/find-redis.mjs` finds it)
 * on a free loopback port, in a fresh temporary folder, with the append-only
 * file on and no RDB snapshots; stopped and its folder removed when the test
 * finishes.
 *
 * @example
 * const redis = await startRedis({ appendfsync: 'always' })
 * await redis.kill('SIGKILL')
 * await redis.restart()
 * @see commandStats
 */
export async function startRedis({
  appendfsync = 'always',
  extraArgs = [],
}: RedisOptions = {}): Promise<StartedRedis> {
  const binary = await findRedisServer({ install: false })
  const dir = await mkdtemp(join(tmpdir(), 'cts-redis-'))
  let server: RedisServer | undefined
  const kill = async (signal: NodeJS.Signals = 'SIGTERM') => {
    await server?.stop(signal)
  }
  // @note Registered first so it runs last: the folder goes after Redis.
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  onTestFinished(() => kill('SIGKILL'))

  const signal = (name: NodeJS.Signals): void => {
    const pid = server?.child.pid
    if (pid === undefined) throw new Error('Redis is not running.')
    process.kill(pid, name)
  }
  const wrap = (command: string, args: string[]): [string, string[]] => [
    command,
    [...args, ...extraArgs],
  ]
  server = await startRedisServer({ binary, dir, appendfsync, wrap })
  const { port, url } = server
  return {
    url,
    port,
    dir,
    kill,
    pause() {
      signal('SIGSTOP')
      onTestFinished(() => {
        try {
          signal('SIGCONT')
        } catch {}
      })
    },
    resume: () => signal('SIGCONT'),
    async user(name, password, rules) {
      const admin = createClient({ url }).on('error', () => {})
      await admin.connect()
      try {
        await admin.sendCommand([
          'ACL',
          'SETUSER',
          name,
          'on',
          `>${password}`,
          ...rules,
        ])
      } finally {
        admin.destroy()
      }
      return url.replace('redis://', `redis://${name}:${password}@`)
    },
    async restart() {
      await kill('SIGTERM')
      server = await startRedisServer({ binary, dir, port, appendfsync, wrap })
    },
  }
}

/**
 * How many times each command ran on the Redis at `url` since it started
 * (or since `CONFIG RESETSTAT`), from `INFO commandstats`, by lower-case
 * name (`evalsha`, `get`, `client|setname`).
 *
 * @example
 * const before = await commandStats(redis.url)
 * await createNamed(proxy.url, 'Ada')
 * const after = await commandStats(redis.url)
 * @see startRedis
 */
export async function commandStats(
  url: string,
): Promise<Record<string, number>> {
  const client = createClient({ url })
  // @note A refused connection is thrown by connect(); without a listener,
  // the client's own 'error' event would end the process.
  client.on('error', () => {})
  await client.connect()
  try {
    const info = await client.info('commandstats')
    const calls: Record<string, number> = {}
    for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
      calls[match[1]!] = Number(match[2])
    return calls
  } finally {
    client.destroy()
  }
}

/** A Redis Cluster started by a test: its nodes, each a `StartedRedis`. */
export interface StartedRedisCluster {
  nodes: StartedRedis[]
  /**
   * Moves the slot that `key` hashes to from the node that holds it to
   * the next one, keys and all, as a resharding does; resolves to the two
   * nodes' ports once every node agrees. One move at a time: two at once
   * on one slot would both start from the same node.
   */
  moveSlotOf(key: string): Promise<{ from: number; to: number }>
  /**
   * Starts to move the slot of `key` as `moveSlotOf` does, and stops once
   * `keys` alone are on the next node: the slot stays half moved (a
   * command on keys of both nodes answers TRYAGAIN) until `finish()` moves
   * the rest.
   */
  startMovingSlotOf(
    key: string,
    keys: string[],
  ): Promise<{ finish(): Promise<{ from: number; to: number }> }>
}

/**
 * Starts `count` Redis nodes in cluster mode (each as `startRedis` starts
 * one) and joins them into one Redis Cluster, the slots shared out evenly
 * and no replicas; resolves once every node says the cluster is ok.
 *
 * @example
 * const { nodes } = await startRedisCluster(3)
 * await startCli(['--store', nodes[1]!.url])
 */
export async function startRedisCluster(
  count = 3,
): Promise<StartedRedisCluster> {
  const nodes: StartedRedis[] = []
  const buses: number[] = []
  for (let at = 0; at < count; at++) {
    // @note The cluster bus defaults to the port + 10000, which may not
    // exist or be free: each node gets a free one of its own.
    const bus = await freePort()
    buses.push(bus)
    nodes.push(
      await startRedis({
        extraArgs: [
          '--cluster-enabled',
          'yes',
          '--cluster-port',
          String(bus),
          '--cluster-config-file',
          'nodes.conf',
        ],
      }),
    )
  }
  const clients = await Promise.all(nodes.map((node) => connected(node.url)))
  onTestFinished(() => {
    for (const client of clients) client.destroy()
  })
  const ids = await Promise.all(clients.map((client) => client.clusterMyId()))
  const per = Math.ceil(16384 / count)
  await Promise.all(
    clients.map((client, at) =>
      client.clusterAddSlotsRange({
        start: at * per,
        end: Math.min(16383, (at + 1) * per - 1),
      }),
    ),
  )
  for (const [at, node] of nodes.entries())
    if (at > 0)
      await clients[0]!.sendCommand([
        'CLUSTER',
        'MEET',
        '127.0.0.1',
        String(node.port),
        String(buses[at]),
      ])
  // @note Up to 30 s: on a loaded machine (the whole suite at once, on 2
  // cores) the nodes took more than 10 s to agree after a slot moved.
  const agreed = async (
    check: (tables: string[], epochs: string[]) => boolean,
  ) => {
    // What each node said last: the error shows who disagreed, and how.
    let said: string[] = []
    for (const until = Date.now() + 30_000; Date.now() < until;) {
      const views = await Promise.all(
        clients.map(async (client) => ({
          info: await client.clusterInfo(),
          nodes: await client.sendCommand(['CLUSTER', 'NODES']),
        })),
      )
      if (
        views.every(({ info }) => /cluster_state:ok/.test(info)) &&
        check(
          views.map(({ nodes: table }) => String(table)),
          views.map(
            ({ info }) => /cluster_current_epoch:(\d+)/.exec(info)?.[1] ?? '',
          ),
        )
      )
        return
      said = views.map(
        ({ info, nodes: table }, at) =>
          `node ${nodes[at]!.port} (${/cluster_state:\w+/.exec(info)?.[0]}, ${/cluster_current_epoch:\d+/.exec(info)?.[0]}):\n${String(table).trim()}`,
      )
      await new Promise((done) => setTimeout(done, 50))
    }
    throw new Error(
      `The Redis Cluster did not agree within 30 s. Each node said:\n${said.join('\n')}`,
    )
  }
  await agreed((tables) =>
    tables.every((table) => table.trim().split('\n').length === count),
  )
  /**
   * The node that every node says holds `slot`, once they all say the same
   * one and know the same newest epoch.
   */
  const ownerOf = async (slot: number): Promise<number> => {
    let owner = -1
    await agreed((tables, epochs) => {
      // @note A node that takes a slot bumps its epoch past the newest it
      // knows: one that did not know the newest yet (just after the
      // cluster formed) kept a lower one, and the old owner's last ping
      // took the slot back from it, each node then naming the other.
      if (new Set(epochs).size !== 1) return false
      const owners = new Set(
        tables.map((table) =>
          ids.findIndex((id) =>
            table.split('\n').some((line) => holds(line, id, slot)),
          ),
        ),
      )
      ;[owner = -1] = owners
      return owners.size === 1 && owner !== -1
    })
    return owner
  }
  const startMoving = async (key: string, first: string[]) => {
    const slot = Number(
      await clients[0]!.sendCommand(['CLUSTER', 'KEYSLOT', key]),
    )
    // @note The node that holds it now, once every node says so: read from
    // one node's table, a move just made could still be news to it, and a
    // move from a node that no longer held the slot left it to nobody, each
    // node sending clients to another for good ("Too many Cluster
    // redirections", "I'm not the owner of hash slot").
    const from = await ownerOf(slot)
    const to = (from + 1) % count
    const [source, target] = [clients[from]!, clients[to]!]
    await target.clusterSetSlot(slot, 'IMPORTING', ids[from]!)
    await source.clusterSetSlot(slot, 'MIGRATING', ids[to]!)
    if (first.length > 0) await migrateKeys(source, nodes[to]!, first)
    return {
      async finish() {
        await migrateSlot(source, nodes[to]!, slot)
        // @note The new owner first, then the old, then the others, as
        // Redis's resharding does: the old owner's redirections then point
        // to a node that knows it owns the slot, and its higher epoch wins.
        for (const at of new Set([to, from, ...clients.keys()]))
          await clients[at]!.clusterSetSlot(slot, 'NODE', ids[to]!)
        // @note Agreed twice, a quarter of a second apart: a move made at
        // once after another left nodes that had agreed each naming another
        // as the owner, for good.
        for (let check = 0; check < 2; check++) {
          if (check > 0) await new Promise((done) => setTimeout(done, 250))
          if ((await ownerOf(slot)) !== to)
            throw new Error(
              `The Redis Cluster moved the slot ${slot} to another node than ${nodes[to]!.port}.`,
            )
        }
        return { from: nodes[from]!.port, to: nodes[to]!.port }
      },
    }
  }
  return {
    nodes,
    moveSlotOf: async (key) => (await startMoving(key, [])).finish(),
    startMovingSlotOf: startMoving,
  }
}

/**
 * Whether a line of `CLUSTER NODES` says that the node `id` holds `slot`
 * (one of the slot ranges the line ends with covers it).
 *
 * @example
 * const table = String(await client.sendCommand(['CLUSTER', 'NODES']))
 * const owns = table.split('\n').some((line) => holds(line, id, slot))
 */
export function holds(line: string, id: string, slot: number): boolean {
  return (
    line.startsWith(id) &&
    line
      .split(' ')
      .slice(8)
      .some((range) => covers(range, slot))
  )
}

/** Whether a slot range of `CLUSTER NODES` (`5461-10922`, `4748`) holds `slot`. */
function covers(range: string, slot: number): boolean {
  const [start, end = start] = range.split('-').map(Number)
  return start! <= slot && slot <= end!
}

/** A connected client of one node of a test's Redis (Cluster). */
type RedisClient = Awaited<ReturnType<typeof connected>>

/**
 * Moves every key of `slot` from the node that `from` is connected to, to
 * the node `to` (a `StartedRedis`, or anything with its loopback port),
 * with `MIGRATE`, up to 1000 keys at a time, until `from` holds none. The
 * slot must be `IMPORTING` on `to` and `MIGRATING` on `from` first, as in
 * Redis's resharding; who holds the slot afterwards (`CLUSTER SETSLOT …
 * NODE`) is left to the caller.
 *
 * @example
 * await target.clusterSetSlot(slot, 'IMPORTING', sourceId)
 * await source.clusterSetSlot(slot, 'MIGRATING', targetId)
 * await migrateSlot(source, cluster.nodes[1]!, slot)
 * @see StartedRedisCluster.moveSlotOf
 */
export async function migrateSlot(
  from: RedisClient,
  to: { port: number },
  slot: number,
): Promise<void> {
  for (;;) {
    const keys = await from.clusterGetKeysInSlot(slot, 1000)
    if (keys.length === 0) return
    await migrateKeys(from, to, keys)
  }
}

/** Moves `keys` from the node that `from` is connected to, to `to`. */
async function migrateKeys(
  from: RedisClient,
  to: { port: number },
  keys: string[],
): Promise<void> {
  await from.sendCommand([
    'MIGRATE',
    '127.0.0.1',
    String(to.port),
    '',
    '0',
    '5000',
    'KEYS',
    ...keys,
  ])
}

async function connected(url: string) {
  const client = createClient({ url })
  client.on('error', () => {})
  await client.connect()
  return client
}
