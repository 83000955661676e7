import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from '@redis/client'
import { onTestFinished } from 'vitest'
import { findRedisServer } from '../scripts/find-redis.mjs'

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

/** How long a starting Redis may take to answer PING. */
const READY_TIMEOUT_MS = 10_000

/**
 * A port that was free a moment ago on 127.0.0.1. Redis takes no port 0
 * (there it listens on no TCP port at all), so the port is picked here.
 */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.unref()
    probe.on('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      const port = typeof address === 'object' && address ? address.port : 0
      probe.close(() => resolve(port))
    })
  })
}

/** Whether the server on `port` answers an inline `PING` with `+PONG`. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' })
    let reply = ''
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1000, () => done(false))
    socket.on('error', () => done(false))
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      reply += chunk
      // @note While it loads its append-only file, Redis answers `-LOADING`.
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'))
    })
  })
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))

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
  let child: ChildProcess | undefined
  let exited: Promise<void> = Promise.resolve()
  let output = ''

  const launch = async (port: number): Promise<boolean> => {
    output = ''
    const started = spawn(
      binary,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        appendfsync,
        '--save',
        '',
        '--daemonize',
        'no',
        '--protected-mode',
        'no',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    )
    child = started
    exited = new Promise((resolve) => started.on('exit', () => resolve()))
    for (const stream of [started.stdout!, started.stderr!])
      stream.setEncoding('utf8').on('data', (chunk: string) => {
        // @note Kept short: only for the message when it does not start.
        output = (output + chunk).slice(-4000)
      })
    const deadline = Date.now() + READY_TIMEOUT_MS
    while (Date.now() < deadline) {
      if (started.exitCode !== null || started.signalCode !== null) return false
      if (await ping(port)) return true
      await sleep(25)
    }
    started.kill('SIGKILL')
    await exited
    throw new Error(
      `redis-server did not answer PING on port ${port} within ${READY_TIMEOUT_MS} ms:\n${output}`,
    )
  }

  const kill = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child && child.exitCode === null && child.signalCode === null)
      child.kill(signal)
    await exited
  }
  // @note Registered first so it runs last: the folder goes after Redis.
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  onTestFinished(() => kill('SIGKILL'))

  // @note The port picked is free until Redis binds it, unless another
  // process takes it in between: then Redis exits, and another is tried.
  let port = 0
  for (let attempt = 0; ; attempt++) {
    port = await freePort()
    if (await launch(port)) break
    if (attempt === 4)
      throw new Error(`redis-server exited before it answered PING:\n${output}`)
  }

  return {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    dir,
    kill,
    async restart() {
      await kill('SIGTERM')
      if (!(await launch(port)))
        throw new Error(
          `redis-server did not start again on port ${port}:\n${output}`,
        )
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
