// The standalone server as a web app: its stores, then steps on a Request around the sandbox's fetch; adapters only bind it to sockets.
import { readFile, stat } from 'node:fs/promises'
import { extname, resolve as resolvePath, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ServerMiddleware, ServerRequest } from 'srvx'
import { createSandboxCore } from '../sandbox-core.ts'
import type { DurableState } from '../durable-state.ts'
import {
  DataFileError,
  lockDataFile,
  moveAway,
  openDataFileLog,
  readDataFile,
  removeStaleTempFiles,
  resolveDataFilePath,
  type DataFileLock,
  type FlushInfo,
} from '../model/data-file.ts'
import type { Store } from '../model/store.ts'
import { findUrlStore } from '../model/stores.ts'
import {
  compareFleetOptions,
  fleetOptionsOf,
  type FleetDifference,
} from '../model/fleet-options.ts'
import { redactUrl } from '../_utils.ts'
import { SandboxError } from '../request/errors.ts'
import { clip } from '../request/validation.ts'
import type { JournalEntry } from '../request/journal.ts'
import type { SandboxOptions } from '../options.ts'
import { SERVER_DEFAULTS } from '../defaults.ts'
import { OptionsError, type Explain } from '../option-messages.ts'
import type { SandboxCore } from '../sandbox.ts'
import { createEdge, type EdgeVerdict } from './edge.ts'

/** One request as the server logs it. */
export interface RequestLog {
  request_id: string | null
  method: string
  path: string
  status: number
  duration_ms: number
  account_id: string | null
  /** Masked. */
  credential: string | null
  code: string | null
}

/**
 * What the app is built from: the sandbox's options and the server's that
 * are not about sockets, each documented on `SandboxServerOptions`.
 */
export interface ServerAppOptions extends SandboxOptions {
  /** The interface the adapter listens on: it decides the admin rules. */
  host: string
  dataFile?: string
  store?: string | { url: string; namespace?: string }
  adminOrigins?: readonly string[]
  allowedHosts?: readonly string[]
  onLog?: (log: RequestLog) => void
  onFlush?: (info: FlushInfo) => void
  playground?: string | false
}

/** The server as a web app, which an adapter binds to a runtime's sockets. */
export interface ServerApp {
  /**
   * Answers one request: the edge, the CORS preflight, the log and the
   * playground's files, then the sandbox, with CORS headers. A `Response` of
   * status 0 (`Response.error()`) asks the adapter to drop the connection.
   */
  fetch(request: ServerRequest): Promise<Response>
  /**
   * Answers a request the adapter refused before it became a `Request`
   * (what only the wire shows), as the sandbox answers errors, and logs it.
   */
  refuse(error: SandboxError, method: string, target: string): Response
  /**
   * Renders an error outside any request the app saw (HTTP the adapter
   * could not read, a failure while sending): the sandbox's request id and
   * error format, not logged.
   */
  answerError(error: unknown): Response
  sandbox: SandboxCore
  /** Whether the data came from the store: a data file that held data, or a shared store that already held this sandbox. */
  loadedFromFile: boolean
  /** Options that only shape seeded data, unused since the shared store held this sandbox seeded otherwise. */
  unusedOptions: readonly FleetDifference[]
  /** Whether a playground is served at `/`. */
  playground: boolean
  /** Closes the store and gives the data file's lock back. */
  close(): Promise<void>
}

/** Headers a browser app on another origin may send and read. */
export const CORS_ALLOW_HEADERS =
  'Authorization, Content-Type, Idempotency-Key, X-Sandbox-Scenario'
export const CORS_EXPOSE_HEADERS =
  'X-Request-Id, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, Allow, ETag, Accept-Post'

// @note A page elsewhere must not frame the playground or the admin surface
// and trick a click on "Reset to the seed" (clickjacking): CSP for today's
// browsers, X-Frame-Options for those that predate frame-ancestors.
const NO_FRAMING: [string, string][] = [
  ['content-security-policy', "frame-ancestors 'none'"],
  ['x-frame-options', 'DENY'],
]

const LOOPBACK = /^(127(?:\.\d{1,3}){3}|::1|localhost|\[::1\])$/i

/** Whether `host` only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  return LOOPBACK.test(host)
}

/**
 * A start-up failure with the exit code the CLI should use. Its message names
 * the options to change as the JavaScript API does (`port: 0`); `explain`
 * names them for another reader (the CLI's `--port 0`, a Playwright config).
 *
 * @example
 * await createSandboxServer({ port: 4100 }).catch((error: unknown) => {
 *   // Port 4100 is already in use on 127.0.0.1. Stop what uses it, or change port: 4100 to another port (port: 0 takes a free one).
 *   if (error instanceof SandboxStartError) console.error(error.message)
 *   throw error
 * })
 */
export class SandboxStartError extends OptionsError {
  readonly exitCode: number
  constructor(explain: Explain | string, exitCode: number) {
    super(explain)
    this.name = 'SandboxStartError'
    this.exitCode = exitCode
  }
}

/**
 * The `deterministic` a session to start from names in its options, or
 * `undefined`: an export names its sandbox's, a recording none.
 *
 * @example
 * deterministicOf({ options: { deterministic: true } }) // true
 * deterministicOf(await readSessionFile('session.jsonl')) // undefined
 */
function deterministicOf(from: unknown): boolean | undefined {
  const value = (from as { options?: { deterministic?: unknown } } | null)
    ?.options?.deterministic
  return typeof value === 'boolean' ? value : undefined
}

/**
 * Builds the standalone server without its sockets: checks the admin rules,
 * opens the data file or the store a URL names, and composes the steps that every
 * request goes through, srvx's middleware shape, around the sandbox's one
 * `fetch`. Every error answer, the steps' own included, is rendered by the
 * sandbox with its request ids and `errorFormat`.
 *
 * @example
 * const app = await createServerApp({ host: '127.0.0.1', playground: false })
 * await app.fetch(new Request('http://localhost/__sandbox/health', { headers: { host: 'localhost' } }))
 * await app.close()
 */
export async function createServerApp(
  options: ServerAppOptions,
): Promise<ServerApp> {
  const {
    host,
    dataFile,
    store: storeOption,
    onLog,
    onFlush,
    playground = PLAYGROUND_DIR,
    adminOrigins = [],
    allowedHosts = [],
    ...sandboxOptions
  } = options
  const edge = createEdge({
    loopback: isLoopback(host),
    adminOrigins,
    allowedHosts,
    adminToken: sandboxOptions.adminToken,
  })
  if (!isLoopback(host) && sandboxOptions.adminToken === undefined) {
    throw new SandboxStartError(
      (naming) =>
        `Refusing to listen on ${host} without an admin token: anyone who can reach it could reset or read the sandbox. Set ${naming.name('adminToken')} (at least 16 characters), or listen on this machine only with ${naming.set('host', "'127.0.0.1'")}.`,
      2,
    )
  }
  if (dataFile !== undefined && storeOption !== undefined) {
    throw new SandboxStartError(
      (naming) =>
        `Give ${naming.name('dataFile')} or ${naming.name('store')}, not both: the sandbox keeps its data in one place.`,
      2,
    )
  }
  const { sandbox, router, durable, attach } = createSandboxCore({
    ...sandboxOptions,
    // @note The server's own unless given: an export keeps the exporting
    // sandbox's (a --deterministic server's replays exactly), and a session
    // that names none (a recording) draws from Web Crypto as the server does.
    deterministic:
      sandboxOptions.deterministic ??
      deterministicOf(sandboxOptions.from) ??
      SERVER_DEFAULTS.deterministic,
    onRequest(entry) {
      sandboxOptions.onRequest?.(entry)
      // @note Logged from the journal entry, not kept until the answer is
      // sent: a network error is never sent, and the entry would stay.
      if (onLog) onLog(logOf(entry))
    },
  })
  await sandbox.ready
  const opened =
    storeOption !== undefined
      ? await openUrlStore(storeOption, sandbox, await durable())
      : dataFile !== undefined
        ? await openDataFile(dataFile, await durable(), onFlush)
        : undefined
  if (opened) attach(opened.store)

  /** Logs an answer that the journal does not record (the sandbox's own API, files, refusals). */
  const log = (
    method: string,
    path: string,
    response: Response,
    started: number,
    code: string | null = null,
  ): void => {
    onLog?.({
      request_id: response.headers.get('x-request-id'),
      method,
      path,
      status: response.status,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
      account_id: null,
      credential: null,
      code,
    })
  }

  const refuse = (
    error: SandboxError,
    method: string,
    target: string,
    started = performance.now(),
  ): Response => {
    const response = router.answerError(error)
    log(method, target.slice(0, 2048), response, started, error.code)
    return response
  }

  // What the edge let through, for the steps after it.
  const seen = new WeakMap<Request, EdgeVerdict & { owned: boolean }>()
  const verdictOf = (request: Request): EdgeVerdict & { owned: boolean } =>
    seen.get(request)!

  /** Turns what nobody planned into a 500 problem; the server keeps serving. */
  const answerFailures: ServerMiddleware = async (_request, next) => {
    try {
      return await next()
    } catch (error) {
      return router.answerError(error)
    }
  }

  /** Refuses a `Host` that is no host, and what the admin surface must not take, before the sandbox reads anything. */
  const checkEdge: ServerMiddleware = (request, next) => {
    const started = performance.now()
    const verdict = edge.check(request, request.ip)
    if (verdict instanceof SandboxError) {
      const { url } = request
      return refuse(verdict, request.method, targetOf(url), started)
    }
    seen.set(
      request,
      Object.assign(verdict, { owned: router.owns(request.url) }),
    )
    return next()
  }

  /** Answers a CORS preflight with the methods the path takes (outside the sandbox's paths, those of the playground's files). */
  const answerPreflight: ServerMiddleware = (request, next) => {
    if (
      request.method !== 'OPTIONS' ||
      !request.headers.has('access-control-request-method')
    )
      return next()
    const { origin, sandboxApi } = verdictOf(request)
    return preflight(
      origin,
      request.headers.get('access-control-request-headers'),
      !sandboxApi,
      router.allows(request.url) ?? FILE_METHODS,
    )
  }

  const logAnswers: ServerMiddleware = async (request, next) => {
    const started = performance.now()
    const response = await next()
    if (response.status === 0) return response
    const { owned, sandboxApi, path } = verdictOf(request)
    // The API's answers are in the journal and logged from there.
    const journaled = owned && !sandboxApi && !path.endsWith('/openapi.json')
    if (!journaled)
      log(request.method, path, response, started, await codeOf(response))
    return response
  }

  /** The CORS headers of an answer to `request`, as the edge found it. */
  const corsOf = (request: Request): [string, string][] => {
    const { origin, owned, sandboxApi, trusted } = verdictOf(request)
    const headers = corsHeaders(origin, owned && !sandboxApi)
    // @note The admin surface never lets a browser send credentials, and a
    // foreign origin gets no grant: its page cannot read the answer.
    return sandboxApi && !trusted
      ? headers.filter(([name]) => name === 'vary')
      : headers
  }

  /** The headers the server adds to the sandbox's answer to `request`: CORS, and on the admin surface no framing. */
  const headersOf = (request: Request): [string, string][] => {
    const headers = corsOf(request)
    return verdictOf(request).sandboxApi ? [...headers, ...NO_FRAMING] : headers
  }

  const serveFiles: ServerMiddleware = (request, next) =>
    verdictOf(request).owned
      ? next()
      : serveFile(playground, request)
          .catch((error: SandboxError) => router.answerError(error))
          .then((file) => {
            if (file === undefined) return next()
            for (const [name, value] of corsOf(request))
              file.headers.set(name, value)
            return file
          })

  const fetch = compose(
    [
      answerFailures,
      checkEdge,
      answerPreflight,
      ...(onLog ? [logAnswers] : []),
      serveFiles,
    ],
    // @note The CORS headers join the sandbox's answer as it is built: set
    // afterwards, they would make it build a `Headers` of all its own.
    (request) => router.fetch(request, headersOf(request)),
  )

  let closing: Promise<void> | undefined
  return {
    fetch,
    refuse: (error, method, target) => refuse(error, method, target),
    answerError: (error) => router.answerError(error),
    sandbox,
    loadedFromFile: opened?.loadedFromFile ?? false,
    unusedOptions: opened?.unused ?? [],
    playground:
      playground !== false &&
      (await stat(resolvePath(playground, 'index.html')).then(
        () => true,
        () => false,
      )),
    close: () =>
      (closing ??= (async () => {
        await opened?.store.close()
        await opened?.lock?.release()
      })()),
  }
}

/**
 * Runs `steps` in order around `handler`, each as `(request, next)`: the
 * composition srvx's `wrapFetch` makes of a server's middleware, so that the
 * same steps serve under any of srvx's adapters.
 *
 * @example
 * const fetch = compose([logAnswers], (request) => sandbox.fetch(request))
 */
function compose(
  steps: readonly ServerMiddleware[],
  handler: (request: ServerRequest) => Promise<Response>,
): (request: ServerRequest) => Promise<Response> {
  let composed: (request: ServerRequest) => Response | Promise<Response> =
    handler
  for (const step of steps.toReversed()) {
    const next = composed
    composed = (request) => step(request, () => next(request))
  }
  const run = composed
  // @note No promise per step: a step that answers at once costs a call.
  return (request) => Promise.resolve(run(request))
}

/**
 * The `code` of a problem answer, for the log line of an answer the journal
 * does not record (the admin surface's refusals): read from a copy of its
 * body, which only an error logged pays for.
 */
async function codeOf(response: Response): Promise<string | null> {
  if (
    response.status < 400 ||
    !response.headers.get('content-type')?.includes('problem+json')
  )
    return null
  const problem = (await response
    .clone()
    .json()
    .catch(() => null)) as { code?: unknown } | null
  return typeof problem?.code === 'string' ? problem.code : null
}

/** The path and query of a serialised URL, as a log shows a request's target. */
function targetOf(href: string): string {
  const slash = href.indexOf('/', href.indexOf('://') + 3)
  return slash === -1 ? '/' : href.slice(slash)
}

/** A store the app opened, and what closes it. */
interface OpenedStore {
  store: Store & { close(): Promise<void> }
  lock?: DataFileLock
  loadedFromFile: boolean
  /** Options of this replica that only shape seeded data, and that the store's sandbox was seeded otherwise. */
  unused?: readonly FleetDifference[]
}

/**
 * Opens the store that `option`'s URL names (`src/model/stores.ts`), which
 * replicas share; one that cannot be reached is a start-up error, and so is
 * a fleet whose rules differ from this replica's options.
 *
 * @note Refused rather than adopted: a replica that took the fleet's rules
 * over its own command line would run otherwise than its operator wrote,
 * and the fleet's rules could only change under running replicas by
 * sending them to every one. A refusal shows at deploy time, before any
 * traffic, while the replicas already serving go on.
 */
async function openUrlStore(
  option: string | { url: string; namespace?: string },
  sandbox: SandboxCore,
  durable: DurableState,
): Promise<OpenedStore> {
  const options = typeof option === 'string' ? { url: option } : option
  // The option was checked against the same entries.
  const entry = findUrlStore(options.url)!
  const own = fleetOptionsOf(sandbox.options)
  let store: Awaited<ReturnType<typeof entry.open>>
  try {
    store = await entry.open(
      {
        ...options,
        onLog: (line) => console.error(line),
        journal: { limit: sandbox.options.journalLimit },
        maxRecords: sandbox.options.limits.records,
        fleet: own,
      },
      durable,
    )
  } catch (error) {
    throw new SandboxStartError((error as Error).message, 1)
  }
  const fleet = store.fleet
  const differences = fleet && compareFleetOptions(fleet.options, own)
  if (fleet && differences && differences.rules.length > 0) {
    await store.close()
    const shown =
      options.namespace === undefined
        ? redactUrl(options.url)
        : `${redactUrl(options.url)} (namespace ${options.namespace})`
    throw new SandboxStartError(
      (naming) =>
        `Refusing to join the sandbox in the store ${shown}: ${differences.rules
          .map(
            ({ option: name, fleet: theirs, own: mine }) =>
              `${naming.name(name)} is ${String(theirs)} in its fleet and ${String(mine)} here`,
          )
          .join(
            '; ',
          )}, and every replica sharing a store must decide by the same rules. Start this replica with the fleet's values, or give the store another namespace (or database) for a sandbox of its own; to change the fleet's rules, stop every replica and delete ${fleet.where} first.`,
      1,
    )
  }
  return {
    store,
    loadedFromFile: store.joined,
    unused: store.joined ? (differences?.seeded ?? []) : [],
  }
}

/**
 * Locks and loads the data file, then compacts it (the snapshot and every
 * line replayed become one fresh file); the lock is given back if any of it
 * fails.
 */
async function openDataFile(
  dataFile: string,
  durable: DurableState,
  onFlush: ((info: FlushInfo) => void) | undefined,
): Promise<OpenedStore> {
  // Links followed: one lock and one file, whichever name leads there.
  const file = await resolveDataFilePath(dataFile)
  const lock = await lockDataFile(file)
  try {
    await removeStaleTempFiles(file)
    const data = await readDataFile(file)
    if (data !== undefined) {
      try {
        // @note Its own file: taken as it is, past the limits or not.
        await durable.load(data)
        durable.restore(data as Record<string, unknown>)
      } catch (error) {
        throw new DataFileError(
          (naming) =>
            `The data file ${file} cannot be used: ${(error as Error).message.replace(/^Failed to load sandbox data: /, '')} It was left untouched. ${moveAway(naming)}`,
        )
      }
    }
    const store = await openDataFileLog(file, durable, {
      ...(onFlush && { onFlush }),
      onError: (error) =>
        console.error(
          `Failed to write the data file ${file}: ${error.message}`,
        ),
    })
    return { store, lock, loadedFromFile: data !== undefined }
  } catch (error) {
    await lock.release()
    throw error
  }
}

/** The log line of a journal entry. */
function logOf(entry: JournalEntry): RequestLog {
  return {
    request_id: entry.request_id,
    method: entry.method,
    path: entry.path,
    status: entry.status,
    duration_ms: Math.round(entry.duration_ms * 100) / 100,
    account_id: entry.account_id,
    credential: entry.credential,
    code: entry.code,
  }
}

// The built playground, from any file of dist/ and from this source file.
const PLAYGROUND_DIR = fileURLToPath(
  new URL(
    import.meta.url.includes('/src/runtimes/')
      ? '../../dist/playground/'
      : '../dist/playground/',
    import.meta.url,
  ),
)

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
}

/** What a path of the playground's files takes, as `Allow` lists it. */
const FILE_METHODS = ['GET', 'HEAD', 'OPTIONS']

/**
 * A file of `dir` for a GET or HEAD of its path (`/` is `index.html`), what
 * an OPTIONS of that path may do, or `undefined` when there is none: the
 * caller answers 404. Another method of a file's path throws `405
 * method_not_allowed`, with `Allow`, as the API's paths answer.
 */
async function serveFile(
  dir: string | false,
  request: Request,
): Promise<Response | undefined> {
  if (dir === false) return undefined
  let path: string
  try {
    path = decodeURIComponent(new URL(request.url).pathname)
  } catch {
    return undefined
  }
  const asked = path
  if (path.endsWith('/')) path += 'index.html'
  const root = resolvePath(dir)
  const file = resolvePath(root, `.${path}`)
  // @note No way out of the directory: `..`, encoded or not, and NUL bytes.
  if (path.includes('\0') || !file.startsWith(root + sep)) return undefined
  const type = CONTENT_TYPES[extname(file)]
  if (type === undefined) return undefined
  try {
    if (!(await stat(file)).isFile()) return undefined
  } catch {
    return undefined
  }
  if (!FILE_METHODS.includes(request.method)) {
    throw new SandboxError(
      'method_not_allowed',
      `${clip(asked)} takes ${FILE_METHODS.join(', ')}, not ${clip(request.method)}.`,
      { headers: { allow: FILE_METHODS.join(', ') } },
    )
  }
  try {
    if (request.method === 'OPTIONS') {
      return new Response(null, {
        status: 204,
        headers: { allow: FILE_METHODS.join(', ') },
      })
    }
    const body = await readFile(file)
    return new Response(request.method === 'HEAD' ? null : body, {
      headers: {
        'content-type': type,
        'content-length': String(body.length),
        'x-content-type-options': 'nosniff',
        ...Object.fromEntries(NO_FRAMING),
        // Vite names the files under assets/ by their content hash.
        'cache-control': path.startsWith('/assets/')
          ? 'public, max-age=31536000, immutable'
          : 'no-cache',
      },
    })
  } catch {
    return undefined
  }
}

const ANY_ORIGIN: [string, string][] = [
  ['access-control-allow-origin', '*'],
  ['access-control-expose-headers', CORS_EXPOSE_HEADERS],
]

const ORIGIN_SYNTAX = /^(?:null|https?:\/\/[A-Za-z0-9._~:[\]-]{1,300})$/i

/**
 * The CORS headers of an answer to a request from `origin`, as pairs: the
 * origin reflected (with credentials allowed, for the API's paths), or `*`
 * when there is none. A value that is no origin gets no grant.
 */
function corsHeaders(
  origin: string | null,
  credentials = false,
): [string, string][] {
  if (origin === null) return ANY_ORIGIN
  if (!ORIGIN_SYNTAX.test(origin)) return [['vary', 'Origin']]
  const headers: [string, string][] = [
    ['access-control-allow-origin', origin],
    ['access-control-expose-headers', CORS_EXPOSE_HEADERS],
    ['vary', 'Origin'],
  ]
  if (credentials) headers.push(['access-control-allow-credentials', 'true'])
  return headers
}

// RFC 9110 field names, comma-separated, as a preflight lists them.
const HEADER_LIST =
  /^[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:\s*,\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$/

/**
 * The answer to a CORS preflight: the methods the path takes, the headers
 * asked for as asked (`traceparent` and the like), and on the API's paths
 * with credentials.
 */
function preflight(
  origin: string | null,
  requested: string | null,
  api: boolean,
  methods: readonly string[],
): Response {
  const allowHeaders =
    requested !== null &&
    requested.length <= 2048 &&
    HEADER_LIST.test(requested.trim())
      ? requested.trim()
      : CORS_ALLOW_HEADERS
  return new Response(null, {
    status: 204,
    headers: [
      // Its own Vary (below) names Origin too.
      ...corsHeaders(origin, api).filter(([name]) => name !== 'vary'),
      ['access-control-allow-methods', methods.join(', ')],
      ['access-control-allow-headers', allowHeaders],
      ['access-control-max-age', '600'],
      ['vary', 'Origin, Access-Control-Request-Headers'],
    ],
  })
}
