#!/usr/bin/env node
// Finds a `redis-server` for the tests that run a real Redis: REDIS_SERVER,
// then `redis-server` on the PATH, Debian's, then `valkey-server` (the same
// server under its fork's name). As root with none found, installs Debian's
// `redis-server` with apt-get (the tests start their own Redis on a free port,
// so only the binary is wanted); otherwise it fails with one line saying what
// to install.
// `node scripts/find-redis.mjs` prints the path it settles on; `npm test`
// runs it before anything else. With `--valkey`, the same for Valkey alone
// (VALKEY_SERVER, then `valkey-server`; Debian 12 has it in its backports),
// for `npm run test:valkey`.
import { accessSync, constants, readdirSync, readFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { aptInstall, canAptInstall } from './_apt.mjs'

/** The names the server goes by, Redis's first. */
export const REDIS_SERVER_NAMES = ['redis-server', 'valkey-server']

/** Where Debian's packages put them. */
export const SYSTEM_REDIS_SERVER = [
  '/usr/bin/redis-server',
  '/usr/bin/valkey-server',
]

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** The first `name` on `PATH` that can be run. */
function onPath(name, path = '') {
  for (const folder of path.split(delimiter)) {
    if (!folder) continue
    const candidate = join(folder, name)
    if (isExecutable(candidate)) return candidate
  }
  return undefined
}

/**
 * The pids of running Redis or Valkey servers, read from /proc (empty where
 * there is none, as on macOS, where apt-get is never used).
 */
function serverPids() {
  const pids = new Set()
  let entries = []
  try {
    entries = readdirSync('/proc')
  } catch {
    return pids
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // @note By its name, not its binary: Debian's redis-server is a
      // symbolic link to redis-check-rdb, which decides by argv[0] what to be.
      const name = readFileSync(`/proc/${entry}/comm`, 'utf8').trim()
      if (/^(?:redis|valkey)-server$/.test(name)) pids.add(Number(entry))
    } catch {
      // @note A process that ended meanwhile, or one we may not look at.
    }
  }
  return pids
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms))

function isAlive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Debian's services write their pids here (`pidfile` in their conf). */
const SERVICE_PIDFILES = [
  '/run/redis/redis-server.pid',
  '/run/valkey/valkey-server.pid',
]

/**
 * Whether `pid` is the system service: the pid in its pidfile, or a server on
 * its port, 6379, as its process title (`redis-server 127.0.0.1:6379`) says.
 */
function isService(pid) {
  for (const pidfile of SERVICE_PIDFILES) {
    try {
      if (Number(readFileSync(pidfile, 'utf8').trim()) === pid) return true
    } catch {
      // @note No pidfile: the title decides.
    }
  }
  try {
    return /:6379\b/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))
  } catch {
    return false
  }
}

/**
 * Stops the service that the package started while it was installed: its
 * maintainer script runs `invoke-rc.d redis-server start` where no policy
 * forbids it (a VM, a CI image without Docker's `policy-rc.d`), and a system
 * Redis left on 6379 would outlive the tests. Only a server that was not
 * running before and is the service is stopped, so that another suite's
 * Redis, started meanwhile on its own port, is left alone.
 */
async function stopNewService(before, log) {
  const started = [...serverPids()].filter(
    (pid) => !before.has(pid) && isService(pid),
  )
  for (const pid of started) {
    log(
      `Stopping the redis-server service (pid ${pid}) that the package started.`,
    )
    try {
      process.kill(pid, 'SIGTERM')
    } catch {
      continue
    }
  }
  for (const pid of started) {
    for (let waited = 0; isAlive(pid) && waited < 5000; waited += 100)
      await sleep(100)
    try {
      if (isAlive(pid)) process.kill(pid, 'SIGKILL')
    } catch {
      // @note It ended between the check and the kill.
    }
  }
}

/** The first server of `names` found on `PATH` or where Debian puts it. */
function findInstalled(path, names = REDIS_SERVER_NAMES) {
  for (const name of names) {
    const found = onPath(name, path)
    if (found) return found
    const system = SYSTEM_REDIS_SERVER.find((p) => p.endsWith(`/${name}`))
    if (system && isExecutable(system)) return system
  }
  return undefined
}

/**
 * The path of a `redis-server` (or `valkey-server`) to run; installs Debian's
 * package when `install` is true and none is found. With `valkey`, of a
 * `valkey-server` alone (`VALKEY_SERVER`), installed from the release's
 * backports where its main suite has none (Debian 12).
 *
 * @example
 * const binary = await findRedisServer({ install: false })
 * const valkey = await findRedisServer({ valkey: true })
 * @see findChromium in ./find-chromium.mjs, the same for the browser tests
 */
export async function findRedisServer({
  env = process.env,
  install = canAptInstall(),
  log = (message) => process.stderr.write(`${message}\n`),
  valkey = false,
} = {}) {
  const [variable, name] = valkey
    ? ['VALKEY_SERVER', 'valkey-server']
    : ['REDIS_SERVER', 'redis-server']
  const given = env[variable]
  if (given) {
    if (isExecutable(given)) return given
    throw new Error(
      `${variable} is ${given}, and there is no program there that can be run.`,
    )
  }
  const names = valkey ? [name] : REDIS_SERVER_NAMES
  const found = findInstalled(env.PATH, names)
  if (found) return found
  if (install) {
    log(`No ${name} found: installing Debian's ${name} with apt-get.`)
    const before = serverPids()
    try {
      aptInstall(name, { backports: valkey })
    } finally {
      await stopNewService(before, log)
    }
    const installed = findInstalled(env.PATH, names)
    if (installed) return installed
  }
  throw new Error(
    valkey
      ? 'No valkey-server found for the Valkey run of the Redis tests: install one (Debian 13, as root: apt-get install -y valkey-server; Debian 12: from bookworm-backports) or set VALKEY_SERVER to a valkey-server binary.'
      : 'No redis-server found for the Redis tests: install one (Debian, as root: apt-get install -y redis-server) or set REDIS_SERVER to a redis-server or valkey-server binary.',
  )
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    const valkey = process.argv.includes('--valkey')
    process.stdout.write(`${await findRedisServer({ valkey })}\n`)
  } catch (error) {
    process.stderr.write(`find-redis: ${error.message}\n`)
    process.exitCode = 1
  }
}
