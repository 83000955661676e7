// Starts a redis-server of its own on a loopback port, with the append-only
// file on and no RDB snapshots: start.mjs, the tests and the bench share it.
import { spawn } from 'node:child_process'
import { connect, createServer } from 'node:net'

/** How long a starting Redis may take to answer PING. */
const READY_TIMEOUT_MS = 10_000

/** How many free ports are tried when Redis exits before it answers. */
const PORT_ATTEMPTS = 5

/** A Redis that did not start; `output` is the tail of what it printed. */
export class RedisStartError extends Error {
  constructor(message, output) {
    super(message)
    this.name = 'RedisStartError'
    this.output = output
  }
}

/**
 * A port that was free a moment ago on 127.0.0.1. Redis takes no port 0
 * (there it listens on no TCP port at all), so the port is picked here.
 */
export function freePort() {
  return new Promise((done, fail) => {
    const probe = createServer()
    probe.unref()
    probe.on('error', fail)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      const port = typeof address === 'object' && address ? address.port : 0
      probe.close(() => done(port))
    })
  })
}

/** Whether the server on `port` answers an inline `PING` with `+PONG`. */
function ping(port) {
  return new Promise((done) => {
    const socket = connect({ port, host: '127.0.0.1' })
    let reply = ''
    const finish = (ok) => {
      socket.destroy()
      done(ok)
    }
    socket.setTimeout(1000, () => finish(false))
    socket.on('error', () => finish(false))
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.setEncoding('utf8').on('data', (chunk) => {
      reply += chunk
      // @note While it loads its append-only file, Redis answers `-LOADING`.
      if (reply.includes('\r\n')) finish(reply.startsWith('+PONG'))
    })
  })
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms))

const lastLine = (text) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .findLast(Boolean) ?? ''

/** One try on `port`: the handle once it answers PING, else undefined. */
async function launch({ binary, dir, port, appendfsync, wrap }) {
  const [command, args] = wrap(binary, [
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
  ])
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  let failed = false
  // @note A binary that cannot be run emits 'error' and no 'exit'.
  const exited = new Promise((done) => {
    child.on('exit', () => done())
    child.on('error', (error) => {
      failed = true
      output += `${error.message}\n`
      done()
    })
  })
  // @note Redis logs to stdout, and a bad argument goes to stderr.
  for (const stream of [child.stdout, child.stderr])
    stream.setEncoding('utf8').on('data', (chunk) => {
      // @note Kept short: only for the message when it does not start.
      output = (output + chunk).slice(-4000)
    })
  const ended = () =>
    failed || child.exitCode !== null || child.signalCode !== null
  const stop = async (signal = 'SIGTERM') => {
    if (!ended()) child.kill(signal)
    await exited
  }
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (Date.now() < deadline) {
    if (ended())
      return {
        output,
        end: failed ? null : (child.exitCode ?? child.signalCode),
      }
    if (await ping(port)) {
      const url = `redis://127.0.0.1:${port}/0`
      return { server: { url, port, dir, child, exited, stop } }
    }
    await sleep(25)
  }
  await stop('SIGKILL')
  throw new RedisStartError(
    `redis-server did not answer PING on port ${port} within ${READY_TIMEOUT_MS / 1000} s.`,
    output,
  )
}

/**
 * Starts `redis-server` on 127.0.0.1 in `dir`, with the append-only file on
 * and no RDB snapshots, and resolves once it answers PING. With no `port`, a
 * free one is picked (and another if Redis exits, as when a process took it
 * meanwhile); with `port`, as on a restart on the same folder, that one only.
 *
 * @example
 * const redis = await startRedisServer({ dir, appendfsync: 'everysec' })
 * console.log(redis.url) // redis://127.0.0.1:41237/0
 * await redis.stop('SIGTERM')
 * @see createRoundRobinProxy in ./proxy.mjs, the load balancer start.mjs puts in front of the replicas
 */
export async function startRedisServer({
  binary = 'redis-server',
  dir,
  port,
  appendfsync = 'everysec',
  wrap = (command, args) => [command, args],
}) {
  let output = ''
  let end
  for (let attempt = 0; attempt < (port ? 1 : PORT_ATTEMPTS); attempt++) {
    const tried = await launch({
      binary,
      dir,
      port: port ?? (await freePort()),
      appendfsync,
      wrap,
    })
    if (tried.server) return tried.server
    output = tried.output
    end = tried.end
  }
  const said = lastLine(output)
  throw new RedisStartError(
    `redis-server exited${end == null ? '' : ` (${end})`} before it answered PING${said ? `: ${said}` : '.'}`,
    output,
  )
}
