#!/usr/bin/env node
// One sandbox for a whole team with one command: a Redis (append-only file,
// fsynced once a second), three sandbox replicas that share it, and a
// round-robin proxy in front of them standing in for a load balancer.
// Ctrl-C (or SIGTERM) stops the proxy, the replicas, then Redis.
//
//   node start.mjs [--port 8080] [--store redis://host:port/db]
//
// With --store, the replicas use that Redis (a managed one, say) and none is
// started here.
import { spawn } from 'node:child_process'
import { accessSync, constants, existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRoundRobinProxy } from './proxy.mjs'
import { RedisStartError, startRedisServer } from './redis.mjs'

const REPLICAS = 3
const DEMO_KEY = 'sk_test_DemoKeyForTheSandbox0001'
const here = dirname(fileURLToPath(import.meta.url))

/** Prints one line and exits non-zero: a user's mistake needs no stack. */
class StartError extends Error {}

function parseArgs(argv) {
  const options = { port: 0, store: undefined }
  for (let i = 0; i < argv.length; i++) {
    const [flag, value] = [argv[i], argv[i + 1]]
    if (flag === '--port' && value !== undefined) options.port = Number(value)
    else if (flag === '--store' && value !== undefined) options.store = value
    else
      throw new StartError(
        `Unknown option '${flag}' (known: --port N, --store URL).`,
      )
    i++
  }
  if (
    !Number.isInteger(options.port) ||
    options.port < 0 ||
    options.port > 65535
  )
    throw new StartError(`--port must be a port number, 0 for a free one.`)
  return options
}

/**
 * The sandbox's CLI: SANDBOX_BIN, else the installed package's `bin` (as a
 * project that depends on it has it), else this checkout's build.
 */
function sandboxBin() {
  if (process.env.SANDBOX_BIN) return process.env.SANDBOX_BIN
  try {
    const manifest = fileURLToPath(
      import.meta.resolve('customer-token-sandbox/package.json'),
    )
    const { bin } = JSON.parse(readFileSync(manifest, 'utf8'))
    return resolve(
      dirname(manifest),
      typeof bin === 'string' ? bin : bin['customer-token-sandbox'],
    )
  } catch {
    // @note Not installed: run from a clone of the repository.
  }
  const built = resolve(here, '../../dist/bin.js')
  if (existsSync(built)) return built
  throw new StartError(
    'customer-token-sandbox is not installed: run npm install in this folder (or npm run build in a clone).',
  )
}

/**
 * A Redis URL as printed: without its password, which ends at the last `@`
 * (a password may hold `/` or `@`).
 */
function redact(url) {
  const at = url.lastIndexOf('@')
  const scheme = /^[a-z][\w+.-]*:\/\//i.exec(url)?.[0]
  if (!scheme || at < scheme.length) return url
  const user = url.slice(scheme.length, at)
  return user.includes(':')
    ? `${scheme}${user.slice(0, user.indexOf(':'))}:***${url.slice(at)}`
    : url
}

/** redis-server (or Valkey's) from REDIS_SERVER, the PATH or /usr/bin. */
function redisServer() {
  const runnable = (path) => {
    try {
      accessSync(path, constants.X_OK)
      return true
    } catch {
      return false
    }
  }
  if (process.env.REDIS_SERVER) return process.env.REDIS_SERVER
  for (const name of ['redis-server', 'valkey-server']) {
    const folders = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin']
    for (const folder of folders)
      if (folder && runnable(join(folder, name))) return join(folder, name)
  }
  throw new StartError(
    'No redis-server found: install Redis 7 or Valkey (Debian: apt-get install redis-server), set REDIS_SERVER, or pass --store with a Redis URL.',
  )
}

/** A child process and a promise of its end. */
function track(child, label) {
  const exited = new Promise((done) => child.on('exit', () => done()))
  child.on('error', (error) => {
    process.stderr.write(`${label}: ${error.message}\n`)
  })
  return { child, label, exited }
}

function lastLine(text) {
  return (
    text
      .split('\n')
      .map((line) => line.trim())
      .find(Boolean) ?? ''
  )
}

function startRedis(dir) {
  // @note appendfsync everysec: a write is in the OS's buffers before Redis
  // answers, so a kill -9 of Redis loses nothing; only a crash of the host
  // loses up to a second. `always` would fsync each write before its answer.
  return startRedisServer({
    binary: redisServer(),
    dir,
    appendfsync: 'everysec',
  })
}

function startReplica(bin, store, n) {
  const child = spawn(
    process.execPath,
    [bin, '--port', '0', '--store', store, '--quiet'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PORT: '', HOST: '' },
    },
  )
  const replica = track(child, `replica ${n}`)
  let stdout = ''
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk) => {
    stderr += chunk
  })
  const url = new Promise((done, fail) => {
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      stdout += chunk
      const match = stdout.match(/(http:\/\/[^\s"]+)[\s"]/)
      if (match) done(match[1])
    })
    child.on('exit', (code, signal) =>
      fail(
        new StartError(
          `replica ${n} exited (${code ?? signal}) before it listened: ${lastLine(stderr)}`,
        ),
      ),
    )
  })
  return { ...replica, url }
}

/** How long a process may take to stop on SIGTERM before it is killed. */
const STOP_TIMEOUT_MS = 10_000

/** Sends SIGTERM, and SIGKILL if `exited` has not come within the timeout. */
async function terminate({ child, exited }) {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill('SIGTERM')
  let timer
  const late = new Promise((done) => {
    timer = setTimeout(done, STOP_TIMEOUT_MS, 'late')
  })
  if ((await Promise.race([exited, late])) === 'late') {
    child.kill('SIGKILL')
    await exited
  }
  clearTimeout(timer)
}

async function stop({ proxy, replicas, redis, dir }) {
  await proxy?.close()
  // @note The replicas first, so that none is left answering 503 for a
  // Redis that is already gone.
  await Promise.all(replicas.map(terminate))
  // @note SIGTERM first: Redis fsyncs its append-only file on the way out.
  if (redis) await terminate(redis)
  if (dir) await rm(dir, { recursive: true, force: true })
}

async function main() {
  const options = parseArgs(process.argv.slice(2))
  const bin = sandboxBin()
  const running = {
    proxy: undefined,
    replicas: [],
    redis: undefined,
    dir: undefined,
  }
  let stopping
  const shutdown = () => (stopping ??= stop(running))
  // @note Registered before anything starts, so a Ctrl-C during start-up
  // stops what has started so far.
  for (const signal of ['SIGINT', 'SIGTERM'])
    process.on(signal, () => {
      shutdown().then(() => process.exit(0))
    })
  try {
    let store = options.store
    if (!store) {
      running.dir = await mkdtemp(join(tmpdir(), 'shared-sandbox-redis-'))
      running.redis = await startRedis(running.dir)
      store = running.redis.url
    }
    for (let n = 1; n <= REPLICAS; n++)
      running.replicas.push(startReplica(bin, store, n))
    const urls = await Promise.all(running.replicas.map(({ url }) => url))
    running.proxy = await createRoundRobinProxy(urls, {
      port: options.port,
    }).catch((error) => {
      // @note A port taken (another start of this example, say) is a
      // user's mistake: one line, no stack.
      if (error.code !== 'EADDRINUSE') throw error
      throw new StartError(
        `Port ${options.port} is taken (is the example already running?): pass another --port, or 0 for a free one.`,
      )
    })
    for (const { child, label } of running.replicas)
      child.on('exit', (code, signal) => {
        if (!stopping)
          process.stderr.write(
            `${label} exited (${code ?? signal}); the proxy answers 502 on its turn.\n`,
          )
      })
    process.stdout.write(
      [
        `Sandbox:  ${running.proxy.url}  (round robin over ${REPLICAS} replicas)`,
        `Demo key: ${DEMO_KEY}`,
        `Redis:    ${redact(store)}${running.redis ? `  (append-only file, appendfsync everysec, in ${running.dir})` : ''}`,
        `Replicas: ${urls.join(' ')}`,
        'Ctrl-C stops them all.',
        '',
      ].join('\n'),
    )
  } catch (error) {
    await shutdown()
    throw error
  }
}

try {
  await main()
} catch (error) {
  process.stderr.write(
    `shared-sandbox: ${error instanceof StartError || error instanceof RedisStartError ? error.message : error.stack}\n`,
  )
  process.exitCode = 1
}
