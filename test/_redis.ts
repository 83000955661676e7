// A real Redis for a test, on its own port and folder, and the commands it ran.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from '@redis/client'
import { onTestFinished } from 'vitest'
import {
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

  server = await startRedisServer({ binary, dir, appendfsync })
  const { port, url } = server
  return {
    url,
    port,
    dir,
    kill,
    async restart() {
      await kill('SIGTERM')
      server = await startRedisServer({ binary, dir, port, appendfsync })
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
