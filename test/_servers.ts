import { randomUUID } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { createClient } from '@redis/client'
import { expect, inject, onTestFinished } from 'vitest'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import {
  createSandboxServer,
  type SandboxServer,
  type SandboxServerOptions,
} from '../src/runtimes/node.ts'
import { main } from '../src/cli/cli.ts'
import { startMisbehaving, type Misbehaviour } from './_misbehaving.ts'
import { startRedis } from './_redis.ts'
import { postCustomer } from './_requests.ts'
import {
  checkRunsOnStoreUnderTest,
  spawnCli,
  type Spawned,
  type SpawnOptions,
} from './_spawn.ts'

// @note Everything here is undone when the current test finishes. vitest runs
// `onTestFinished` callbacks last registered first, so a server started on a
// data file closes (and writes its last snapshot) before its folder goes.

/**
 * Options for a service whose every configurable assumption is off the
 * default: `verify` against it should find each row's difference.
 *
 * @example
 * const live = await startServer({ ...ALL_DIFFERENT, customersPerAccount: 0 })
 */
export const ALL_DIFFERENT: SandboxServerOptions = {
  requiredFields: ['email'],
  nameLength: { min: 2, max: 50 },
  emailMaxLength: 120,
  uniqueEmail: true,
  unknownFields: 'ignore',
  scopes: [
    'customers:read',
    'customers:write',
    'tokens:write',
    'invoices:read',
  ],
  expiresIn: { default: 600, min: 30, max: 7200 },
  v1AcceptsTokens: false,
  tokenIssuers: 'api-keys',
  rateLimit: { limit: 5000, windowSeconds: 120 },
  maxBodyBytes: 65_536,
  keepAliveTimeout: 3000,
  maxHeadersCount: 40,
}

/**
 * Makes an empty temporary folder, removed with its content when the test finishes.
 *
 * @example
 * const folder = await tempFolder('cts-temp-')
 * await writeFile(join(folder, 'notes.txt'), 'not ours')
 */
export async function tempFolder(prefix = 'cts-'): Promise<string> {
  return tempFolderNow(prefix)
}

/** {@link tempFolder}, made before the caller's next await. */
function tempFolderNow(prefix = 'cts-'): string {
  // @note Made at once, so that the clean-up is registered before any await:
  // in a concurrent suite, the current test is known only until then.
  const folder = mkdtempSync(join(tmpdir(), prefix))
  onTestFinished(() => rm(folder, { recursive: true, force: true }))
  return folder
}

/**
 * The path of a data file that does not exist yet, `data.json` in a fresh
 * {@link tempFolder}.
 *
 * @example
 * const file = await tempDataFile('cts-torn-')
 * const server = await startServer({ dataFile: file })
 */
export async function tempDataFile(prefix?: string): Promise<string> {
  return join(await tempFolder(prefix), 'data.json')
}

/**
 * Starts `createSandboxServer` on a free port without the playground,
 * closed when the test finishes (closing twice is harmless).
 *
 * @example
 * const server = await startServer({ seed: 1, requestTimeout: 300 })
 * const response = await fetch(`${server.url}/__sandbox/health`)
 */
export async function startServer(
  options: SandboxServerOptions = {},
): Promise<SandboxServer> {
  const started = createSandboxServer({
    port: 0,
    playground: false,
    ...storeUnderTest(options),
    ...options,
  })
  // @note Registered before the await: in a concurrent suite, the current
  // test is known only until then (a slower store start lost it).
  onTestFinished(async () => {
    const server = await started.catch(() => undefined)
    await server?.close()
  })
  return started
}

/**
 * The store a server keeps its state in when its test names none: the
 * memory store, unless `SANDBOX_TEST_STORE` is `file` (a fresh data file)
 * or `redis` (a fresh Redis), so that the same tests with the same
 * assertions run on every store (the vitest projects file and redis).
 */
export function storeUnderTest(
  options: SandboxServerOptions,
): SandboxServerOptions {
  const kind = process.env.SANDBOX_TEST_STORE
  if (options.dataFile !== undefined || options.store !== undefined) return {}
  checkRunsOnStoreUnderTest()
  if (kind === 'file') return { dataFile: join(tempFolderNow(), 'data.json') }
  if (kind === 'redis') {
    return {
      store: { url: inject('sharedRedisUrl'), namespace: randomUUID() },
    }
  }
  if (kind !== undefined && kind !== 'memory')
    throw new Error(
      `SANDBOX_TEST_STORE is memory, file or redis, not "${kind}".`,
    )
  return {}
}

/** How to spawn the CLI besides its arguments. */
export interface CliOptions extends SpawnOptions {
  /** Environment variables on top of this process's. */
  env?: Record<string, string>
}

/** A spawned CLI that the test may stop itself. */
export interface RunningCli extends Spawned {
  /** Sends `signal` and resolves with the exit code (or the signal's name). */
  stop(signal?: NodeJS.Signals): Promise<number | string>
}

/**
 * Spawns the built CLI with `args` (see {@link spawnCli}); if it is still
 * running when the test finishes, it is killed and waited for.
 *
 * @example
 * const cli = runCli(['--port', '0', '--request-timeout', 'soon'])
 * expect(await cli.exited).toBe(1)
 */
export function runCli(
  args: string[],
  { env, ...options }: CliOptions = {},
): RunningCli {
  const cli = spawnCli(args, env, options)
  const stop = (signal: NodeJS.Signals = 'SIGTERM') => {
    cli.child.kill(signal)
    return cli.exited
  }
  onTestFinished(async () => {
    await stop('SIGKILL')
  })
  return { ...cli, stop }
}

/**
 * Spawns the built CLI like {@link runCli} and waits for the first URL it
 * prints (the server's, with or without `--quiet`).
 *
 * @example
 * const cli = await startCli(['--port', '0', '--quiet', '--data-file', file])
 * await fetch(`${cli.url}/__sandbox/health`)
 * expect(await cli.stop()).toBe(0)
 */
export async function startCli(
  args: string[],
  options: CliOptions = {},
): Promise<RunningCli & { url: string }> {
  const cli = runCli(args, options)
  // Up to its end (a space, a line end or the quote of a JSON banner), so
  // that a URL cut between two chunks is not taken.
  const [, url] = await cli.waitFor(/(http:\/\/[^\s"]+)[\s"]/)
  return { ...cli, url: url! }
}

/**
 * Spawns `record` in front of `target`, writing `file`, with `extra` flags;
 * resolves once it says where it records through.
 *
 * @example
 * const { cli, url } = await startRecording(live.url, file)
 * await fetch(`${url}/v1/customers`, init)
 * expect(await cli.stop('SIGINT')).toBe(0)
 */
export async function startRecording(
  target: string,
  file: string,
  extra: string[] = [],
): Promise<{ cli: RunningCli; url: string }> {
  const cli = runCli([
    'record',
    '--target',
    target,
    '--port',
    '0',
    '--out',
    file,
    ...extra,
  ])
  const [, url] = await cli.waitFor(/through (http:\/\/\S+)/)
  return { cli, url: url! }
}

/**
 * Spawns `record` ({@link startRecording}) in front of a service that
 * misbehaves as `how` says, its session file in a fresh folder named after
 * `prefix`.
 *
 * @example
 * const { url, file } = await recordMisbehaving({ kind: 'endless' }, 'cts-endless-', ['--timeout', '1000'])
 */
export async function recordMisbehaving(
  how: Misbehaviour,
  prefix: string,
  extra: string[] = [],
): Promise<{ cli: RunningCli; file: string; url: string }> {
  const service = await startMisbehaving(how)
  const file = join(await tempFolder(prefix), 'session.jsonl')
  return { ...(await startRecording(service.url, file, extra)), file }
}

/**
 * Creates customer number `n` with the demo key: a record of about 250
 * bytes, for tests that fill a data file or write many log lines.
 *
 * @example
 * expect((await createFiller(cli.url, 1)).status).toBe(201)
 */
export const createFiller = (url: string, n: number): Promise<Response> =>
  postCustomer(url, {
    name: `${'Filler '.repeat(25)}${n}`,
    email: `filler${n}@example.com`,
  })

/**
 * Creates a customer named `name` (email `<name>@example.com`) with the demo
 * key on the server at `url`.
 *
 * @example
 * expect((await createNamed(server.url, 'Ada')).status).toBe(201)
 */
export const createNamed = (url: string, name: string): Promise<Response> =>
  postCustomer(url, { name, email: `${name}@example.com` })

export { postCustomer } from './_requests.ts'

/**
 * POSTs `body` as JSON to `path` on the server at `url`, with `key` as
 * bearer when given (an API key, or the admin token).
 *
 * @example
 * expect((await postJson(url, '/__sandbox/reset', {})).status).toBe(200)
 */
export const postJson = (
  url: string,
  path: string,
  body: unknown,
  key?: string,
): Promise<Response> =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key && { authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify(body),
  })

/**
 * A stream that keeps what is written to it, for `main({ stdout, stderr })`
 * run in this process.
 *
 * @example
 * const out = captureOutput()
 * await main({ args: ['--help'], stdout: out.stream, env: {} })
 * expect(out.text()).toContain('--port')
 */
export function captureOutput(): { stream: Writable; text(): string } {
  let text = ''
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk)
      done()
    },
  })
  return { stream, text: () => text }
}

/**
 * Runs the CLI's `main()` in this process with `args` and no environment,
 * closes the server it started, if any, and gives what it wrote to stderr
 * with its exit code.
 *
 * @example
 * const [stderr, exitCode] = await runMain(['--port', 'http'])
 * expect(exitCode).toBe(2)
 */
export async function runMain(
  args: string[],
): Promise<[string, number | undefined]> {
  const err = captureOutput()
  const { exitCode, server } = await main({
    args,
    stdout: captureOutput().stream,
    stderr: err.stream,
    env: {},
  })
  await server?.close()
  return [err.text(), exitCode]
}

/**
 * Runs `verify` in this process against `target` with the demo key at
 * `--rate 1000` and `flags` after them (a `--rate` among them wins), and
 * gives its exit code and the report it printed.
 *
 * @example
 * const { exitCode, report } = await verifyAgainst(service.url, '--max-body', '1MB')
 * expect(exitCode).toBe(3)
 */
export async function verifyAgainst(
  target: string,
  ...flags: string[]
): Promise<{ exitCode: number | undefined; report: string }> {
  const out = captureOutput()
  const { exitCode } = await main({
    args: [
      'verify',
      '--target',
      target,
      '--key',
      DEMO_KEY_ONE,
      '--rate',
      '1000',
      ...flags,
    ],
    stdout: out.stream,
    stderr: captureOutput().stream,
    env: {},
  })
  return { exitCode, report: out.text() }
}

/**
 * The names of the customers the server at `url` holds, in its order.
 *
 * @example
 * expect(await customerNames(server.url)).toEqual(['Ada'])
 */
export async function customerNames(url: string): Promise<string[]> {
  const response = await fetch(`${url}/__sandbox/state`)
  expect(response.status).toBe(200)
  const state = (await response.json()) as { customers: { name: string }[] }
  return state.customers.map((customer) => customer.name)
}

/**
 * Mints a token of `scopes` at `url` with the API key `key` and gives its
 * secret, checking that the mint answered 201.
 *
 * @example
 * const token = await mintToken(replica.url, DEMO_KEY_TWO)
 * await postCustomer(other.url, body, { headers: { authorization: `Bearer ${token}` } })
 */
export async function mintToken(
  url: string,
  key: string,
  scopes = ['customers:write'],
): Promise<string> {
  const minted = await fetch(`${url}/v2/tokens`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ scopes }),
  })
  expect(minted.status).toBe(201)
  return ((await minted.json()) as { token: string }).token
}

/**
 * Checks that the replica at `url` says Redis lost records: health `503`,
 * degraded with `REDIS_LOST_RECORDS`, its message naming `key`.
 *
 * @example
 * await client.del(list)
 * await expectRecordsLost(replica.url, list)
 */
export async function expectRecordsLost(
  url: string,
  key: string,
): Promise<void> {
  const health = await fetch(`${url}/__sandbox/health`)
  expect(health.status).toBe(503)
  const said = (await health.json()) as {
    status: string
    storage: { code: string; message: string }
  }
  expect(said).toMatchObject({
    status: 'degraded',
    storage: { code: 'REDIS_LOST_RECORDS' },
  })
  expect(said.storage.message).toContain(key)
}

/**
 * The ids of the tokens the server at `url` holds, in its order.
 *
 * @example
 * expect(await tokenIds(server.url)).toEqual([token.id])
 */
export async function tokenIds(url: string): Promise<string[]> {
  const response = await fetch(`${url}/__sandbox/state`)
  expect(response.status).toBe(200)
  const state = (await response.json()) as { tokens: { id: string }[] }
  return state.tokens.map((token) => token.id)
}

/**
 * Writes the session of a sandbox with one customer, "Session", and no
 * seeded ones, into `folder`, for `--from`; returns its path.
 *
 * @example
 * const session = await writeSession(await tempFolder('cts-from-'))
 */
export async function writeSession(folder: string): Promise<string> {
  const source = await startServer({ customersPerAccount: 0 })
  expect((await createNamed(source.url, 'Session')).status).toBe(201)
  const path = join(folder, 'session.json')
  await writeFile(path, JSON.stringify(source.sandbox.export()))
  await source.close()
  return path
}

/**
 * What the replicas of a fleet take beside the Redis and namespace they
 * share: server options (`limits`, or a `customersPerAccount` other than
 * none) and the store's `cacheRecords`.
 */
export type FleetOptions = Omit<SandboxServerOptions, 'store'> & {
  cacheRecords?: number
}

/**
 * A replica's options on the Redis at `url`, in `namespace`, with seed 1
 * and no customers unless `options` say otherwise.
 */
const emptyReplica = (
  url: string,
  namespace: string,
  { cacheRecords, ...options }: FleetOptions = {},
): SandboxServerOptions => ({
  seed: 1,
  customersPerAccount: 0,
  ...options,
  store: {
    url,
    namespace,
    ...(cacheRecords !== undefined && { cacheRecords }),
  },
})

/**
 * A fresh Redis, a `start` of replicas on it that seed no customers, in one
 * `namespace`, with `options` beside (`limits`, `cacheRecords`, another
 * `customersPerAccount`), and a client of that Redis (for what a test reads
 * or damages by hand); all stopped when the test finishes.
 *
 * @example
 * const { start, client } = await emptyFleet('lost')
 * const [first, second] = [await start(), await start()]
 * await client.flushAll()
 * @example
 * const { start } = await emptyFleet('full', { limits: { records: 14 } })
 */
export async function emptyFleet(namespace: string, options?: FleetOptions) {
  const redis = await startRedis()
  const replicaOptions = emptyReplica(redis.url, namespace, options)
  const client = createClient({ url: redis.url }).on('error', () => {})
  onTestFinished(() => {
    if (client.isOpen) client.destroy()
  })
  await client.connect()
  return { redis, client, start: () => startServer(replicaOptions) }
}

/**
 * A fresh Redis on which each `fleet()` is a new fleet of replicas that
 * seed no customers, in a namespace of its own (`<prefix>-0`,
 * `<prefix>-1`, …), with `options` beside as {@link emptyFleet} takes them
 * (`cacheRecords`): for a race tried again on new fleets. A fleet's `start`
 * starts one more replica, its `close` closes those it started; whatever is
 * open when the test finishes is closed then.
 *
 * @example
 * const { fleet } = await emptyFleets('beside-reset', { cacheRecords: 1 })
 * for (let round = 0; round < 20; round++) {
 *   const { start, close } = fleet()
 *   const [a, b] = [await start(), await start()]
 *   await close()
 * }
 * @see emptyFleet
 */
export async function emptyFleets(prefix: string, options?: FleetOptions) {
  const redis = await startRedis()
  let fleets = 0
  const fleet = () => {
    const replicaOptions = emptyReplica(
      redis.url,
      `${prefix}-${fleets++}`,
      options,
    )
    const replicas: SandboxServer[] = []
    return {
      async start(): Promise<SandboxServer> {
        const replica = await startServer(replicaOptions)
        replicas.push(replica)
        return replica
      },
      async close(): Promise<void> {
        await Promise.all(replicas.map((replica) => replica.close()))
      },
    }
  }
  return { redis, fleet }
}

/**
 * A replica of the sandbox `namespace`, seeding no customers, on the first
 * node of `cluster`, after two resets: they leave every key of its log in
 * place, so that the read by which it catches up is served while the
 * sandbox's slot is half moved (`startMovingSlotOf`).
 *
 * @example
 * const cluster = await startRedisCluster(3)
 * const replica = await replicaOnCluster(cluster, 'moving')
 * const moving = await cluster.startMovingSlotOf('{moving}', ['{moving}:journal'])
 */
export async function replicaOnCluster(
  cluster: { nodes: { url: string }[] },
  namespace: string,
): Promise<SandboxServer> {
  const replica = await startServer(
    emptyReplica(cluster.nodes[0]!.url, namespace),
  )
  for (const seed of [2, 3])
    expect(
      (await postJson(replica.url, '/__sandbox/reset', { seed })).status,
    ).toBe(200)
  return replica
}

/**
 * Stores one customer on the replica at `url`, then sends a create that
 * waits a second before it is decided, and resolves 100 ms later, while it
 * waits; `answered()` expects that create answered 201 and in the journal.
 *
 * @example
 * const create = await createInFlight(replica.url)
 * // … an admin change beside it, refused …
 * await create.answered()
 */
export async function createInFlight(
  url: string,
): Promise<{ answered(): Promise<void> }> {
  expect(
    (await postCustomer(url, { name: 'Ada', email: 'a@example.com' })).status,
  ).toBe(201)
  expect(
    (await postJson(url, '/__sandbox/latency', { min_ms: 1000, max_ms: 1000 }))
      .status,
  ).toBe(200)
  const inFlight = postCustomer(url, {
    name: 'Grace',
    email: 'grace@example.com',
  })
  await new Promise((done) => setTimeout(done, 100))
  return {
    async answered() {
      const created = await inFlight
      expect(created.status).toBe(201)
      const { requests } = (await (
        await fetch(`${url}/__sandbox/requests`)
      ).json()) as { requests: { request_id: string }[] }
      expect(requests.map((entry) => entry.request_id)).toContain(
        created.headers.get('x-request-id'),
      )
    },
  }
}
