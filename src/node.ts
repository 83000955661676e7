import {
  createServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { readFile, stat } from 'node:fs/promises'
import { extname, resolve as resolvePath, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { toNodeHandler } from 'srvx/node'
import { createSandboxCore } from './sandbox-core.ts'
import { DirectResponse, IncomingCall, sendResponse } from './node-direct.ts'
import {
  DataFileError,
  lockDataFile,
  openDataFileLog,
  readDataFile,
  removeStaleTempFiles,
  type DataFileLock,
  type DataFileLog,
  type FlushInfo,
} from './data-file.ts'
import { SandboxError } from './errors.ts'
import type { JournalEntry } from './journal.ts'
import type { SandboxOptions } from './options.ts'
import type { SandboxCore } from './sandbox.ts'

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

/** Options of `createSandboxServer()`: the sandbox's own, plus where and how to serve. */
export interface SandboxServerOptions extends SandboxOptions {
  /**
   * The port; 0 picks a free one.
   * @default 4100
   * @example createSandboxServer({ port: 0 })
   */
  port?: number
  /**
   * The interface to listen on. Beyond loopback the server needs `adminToken`.
   * @default '127.0.0.1'
   * @example createSandboxServer({ host: '0.0.0.0', adminToken: process.env.ADMIN_TOKEN })
   */
  host?: string
  /**
   * Keeps the data in this file (JSON Lines: a snapshot, then one line per
   * record created): loaded on start (created when missing) and locked
   * against a second server. Each write is on disk (fdatasync) before its
   * `201`; a write that cannot be stored is a `503 storage_unavailable`.
   * @default undefined
   * @example createSandboxServer({ dataFile: 'sandbox.json' })
   */
  dataFile?: string
  /**
   * @deprecated Ignored: with a data file, every write is stored before it
   * is answered.
   */
  dataFileDelayMs?: number
  /** Called once per request answered. */
  onLog?: (log: RequestLog) => void
  /** Called after each snapshot (compaction) of the data file: at start, after a `/__sandbox/` change, on close. */
  onFlush?: (info: FlushInfo) => void
  /**
   * A directory of static files served at `/` for paths outside the API and
   * `/__sandbox/`; `false` serves none.
   * @default the playground built into this package (`dist/playground`)
   * @example createSandboxServer({ playground: false })
   */
  playground?: string | false
}

/** A running sandbox server. */
export interface SandboxServer {
  /** Its base URL, e.g. `http://127.0.0.1:4100`. */
  url: string
  port: number
  sandbox: SandboxCore
  /** Whether the data came from an existing data file. */
  loadedFromFile: boolean
  /** The playground's URL, or null when none is served (not built, or `playground: false`). */
  playgroundUrl: string | null
  /** Stops accepting connections, closes the open ones and flushes the data file. */
  close(): Promise<void>
}

/** Headers a browser app on another origin may send and read. */
export const CORS_ALLOW_HEADERS =
  'Authorization, Content-Type, Idempotency-Key, X-Sandbox-Scenario'
export const CORS_EXPOSE_HEADERS =
  'X-Request-Id, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, Allow'

const LOOPBACK = /^(127(?:\.\d{1,3}){3}|::1|localhost|\[::1\])$/i

/** Whether `host` only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  return LOOPBACK.test(host)
}

/**
 * Starts the sandbox as a real HTTP server on node:http, with the same
 * resolvers as the MSW handlers: requests are routed by the sandbox's own
 * route table, not MSW's matching.
 *
 * @example
 * import { createSandboxServer } from 'customer-token-sandbox/node'
 *
 * const server = await createSandboxServer({ port: 0 })
 * await fetch(`${server.url}/__sandbox/health`)
 * await server.close()
 */
export async function createSandboxServer(
  options: SandboxServerOptions = {},
): Promise<SandboxServer> {
  const {
    port = 4100,
    host = '127.0.0.1',
    dataFile,
    dataFileDelayMs: _deprecated,
    onLog,
    onFlush,
    playground = PLAYGROUND_DIR,
    ...sandboxOptions
  } = options
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new RangeError(
      `Failed to start the sandbox server: port must be a whole number from 0 to 65535 (got ${String(port)}).`,
    )
  }
  if (!isLoopback(host) && sandboxOptions.adminToken === undefined) {
    throw new SandboxStartError(
      `Refusing to listen on ${host} without an admin token: anyone who can reach it could reset or read the sandbox. Pass --admin-token (at least 16 characters), or listen on 127.0.0.1.`,
      2,
    )
  }

  let log: DataFileLog | undefined
  const pending = new Map<string, JournalEntry>()
  const { sandbox, router } = createSandboxCore(
    {
      // A replayed session keeps the determinism it was recorded with.
      ...(sandboxOptions.from === undefined && { deterministic: false }),
      ...sandboxOptions,
      onRequest(entry) {
        sandboxOptions.onRequest?.(entry)
        if (onLog) pending.set(entry.request_id, entry)
      },
    },
    // The operations' answers are written to node:http as they were built
    // (no web stream, no Headers object), with the CORS headers built in.
    {
      Response: DirectResponse,
      streamedBodies: true,
      responseHeaders: (request) => corsHeaders(request.headers.get('origin')),
      ...(dataFile !== undefined && {
        storage: {
          persist: (created, undo) => log!.append(created, undo),
          persistState: () => log!.snapshot(),
          fault: () => log?.fault(),
        },
      }),
    },
  )
  await sandbox.ready

  let loadedFromFile = false
  let lock: DataFileLock | undefined
  // Whatever fails from here on must give the lock back.
  const abandon = async (): Promise<void> => {
    await log?.close()
    await lock?.release()
  }
  if (dataFile !== undefined) {
    lock = await lockDataFile(dataFile)
    try {
      await removeStaleTempFiles(dataFile)
      const data = await readDataFile(dataFile)
      if (data !== undefined) {
        try {
          await sandbox.load(data)
        } catch (error) {
          throw new DataFileError(
            `The data file ${dataFile} cannot be used: ${(error as Error).message.replace(/^Failed to load sandbox data: /, '')} It was left untouched; move it away or pass another --data-file.`,
          )
        }
        loadedFromFile = true
      }
      // Compacts: the snapshot and every line replayed become one fresh file.
      log = await openDataFileLog(dataFile, sandbox, {
        ...(onFlush && { onFlush }),
        onError: (error) =>
          console.error(
            `Failed to write the data file ${dataFile}: ${error.message}`,
          ),
      })
    } catch (error) {
      await lock.release()
      throw error
    }
  }

  const baseOrigin = sandbox.options.baseUrl?.origin
  const fetchHandler = async (request: Request): Promise<Response> => {
    const started = performance.now()
    const origin = request.headers.get('origin')
    if (
      request.method === 'OPTIONS' &&
      request.headers.has('access-control-request-method')
    ) {
      return new Response(null, {
        status: 204,
        headers: [
          ...corsHeaders(origin),
          ['access-control-allow-methods', 'GET, POST, DELETE, OPTIONS'],
          ['access-control-allow-headers', CORS_ALLOW_HEADERS],
          ['access-control-max-age', '600'],
        ],
      })
    }
    // @note With a baseUrl, its path prefix applies on the server's own origin.
    const routed =
      baseOrigin === undefined ? request : rebase(request, baseOrigin)
    // The sandbox's answers carry the CORS headers already (`corsHeaders`).
    let response = await (sandbox.handle(routed) ??
      serveFile(playground, request).then((file) =>
        withCors(file ?? notFound(sandbox, request), origin),
      ))
    if (response.status === 0) {
      // A scenario asked for a network error: drop the connection unanswered.
      const node = (
        request as { runtime?: { node?: { res?: ServerResponse } } }
      ).runtime?.node
      node?.res?.destroy()
      return new Response(null, { status: 204 })
    }
    // Parsed once, and only when used: the request path needs neither.
    let path: string | undefined
    const pathname = (): string => (path ??= new URL(request.url).pathname)
    settle(request.method, pathname, response, started)
    return response
  }

  /** What every answer gets before it is sent: 413's close, and the log. */
  const settle = (
    method: string,
    pathname: () => string,
    response: Response,
    started: number,
  ): void => {
    // @note Past the limit the body is left unread: close rather than read it.
    if (response.status === 413) response.headers.set('connection', 'close')
    if (!onLog) return
    const requestId = response.headers.get('x-request-id')
    const entry = requestId === null ? undefined : pending.get(requestId)
    if (requestId !== null) pending.delete(requestId)
    onLog({
      request_id: requestId,
      method,
      path: pathname(),
      status: response.status,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
      account_id: entry?.account_id ?? null,
      credential: entry?.credential ?? null,
      code: entry?.code ?? null,
    })
  }

  // The operations' paths skip srvx: no Request, URL or Headers is built for
  // them. Anything else, including paths that only normalise to an
  // operation's (`/v1/./customers`), goes through srvx and the router.
  const direct = async (
    req: IncomingMessage,
    res: ServerResponse,
    resolve: (request: IncomingCall) => Promise<Response>,
    path: string,
  ): Promise<void> => {
    const started = performance.now()
    const response = await resolve(new IncomingCall(req))
    if (response.status === 0) {
      res.destroy()
      return
    }
    settle(req.method!, () => path, response, started)
    await sendResponse(res, response)
  }

  const nodeHandler = toNodeHandler(fetchHandler)
  const sockets = new Set<Socket>()
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const target = req.url ?? ''
    const query = target.indexOf('?')
    const path = query === -1 ? target : target.slice(0, query)
    const resolve =
      req.method === 'POST' && path.startsWith('/')
        ? router.operation(req.method, path)
        : undefined
    if (resolve) {
      direct(req, res, resolve, path).catch((error: unknown) => {
        console.error(error)
        if (!res.headersSent) res.writeHead(500)
        res.end()
      })
    } else {
      void nodeHandler(req as never, res as never)
    }
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new SandboxStartError(
              `Port ${port} is already in use on ${host}. Stop what uses it, pick another with --port (or PORT), or use --port 0 for a free one.`,
              1,
            )
          : error.code === 'EACCES'
            ? new SandboxStartError(
                `Not allowed to listen on ${host}:${port}; ports below 1024 need privileges. Pick another with --port.`,
                1,
              )
            : error,
      )
    })
    server.listen(port, host, () => resolve())
  }).catch(async (error: unknown) => {
    await abandon()
    throw error
  })
  const address = server.address() as AddressInfo
  const shownHost =
    address.family === 'IPv6' ? `[${address.address}]` : address.address
  let closing: Promise<void> | undefined

  return {
    url: `http://${shownHost}:${address.port}`,
    port: address.port,
    sandbox,
    loadedFromFile,
    playgroundUrl:
      playground !== false &&
      (await stat(resolvePath(playground, 'index.html')).catch(() => undefined))
        ? `http://${shownHost}:${address.port}/`
        : null,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) =>
          server.close(() => resolve()),
        )
        // Keep-alive connections go idle as their last answers are sent:
        // close them as they do, and cut what is left after two seconds.
        server.closeIdleConnections()
        const sweep = setInterval(() => server.closeIdleConnections(), 20)
        const timer = setTimeout(() => {
          for (const socket of sockets) socket.destroy()
        }, 2000)
        await closed
        clearInterval(sweep)
        clearTimeout(timer)
        await abandon()
      })()
      return closing
    },
  }
}

/** A start-up failure with the exit code the CLI should use. */
export class SandboxStartError extends Error {
  readonly exitCode: number
  constructor(message: string, exitCode: number) {
    super(message)
    this.name = 'SandboxStartError'
    this.exitCode = exitCode
  }
}

// @note The same from src/ and from any file of dist/: the built playground.
const PLAYGROUND_DIR = fileURLToPath(
  new URL('../dist/playground/', import.meta.url),
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

/**
 * A file of `dir` for a GET or HEAD of its path (`/` is `index.html`), or
 * `undefined` when there is none: the caller answers 404.
 */
async function serveFile(
  dir: string | false,
  request: Request,
): Promise<Response | undefined> {
  if (dir === false || (request.method !== 'GET' && request.method !== 'HEAD'))
    return undefined
  let path: string
  try {
    path = decodeURIComponent(new URL(request.url).pathname)
  } catch {
    return undefined
  }
  if (path.endsWith('/')) path += 'index.html'
  const root = resolvePath(dir)
  const file = resolvePath(root, `.${path}`)
  // @note No way out of the directory: `..`, encoded or not, and NUL bytes.
  if (path.includes('\0') || !file.startsWith(root + sep)) return undefined
  const type = CONTENT_TYPES[extname(file)]
  if (type === undefined) return undefined
  try {
    if (!(await stat(file)).isFile()) return undefined
    const body = await readFile(file)
    return new Response(request.method === 'HEAD' ? null : body, {
      headers: {
        'content-type': type,
        'content-length': String(body.length),
        'x-content-type-options': 'nosniff',
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

function rebase(request: Request, origin: string): Request {
  const url = new URL(request.url)
  return new Request(origin + url.pathname + url.search, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    // @ts-expect-error Node needs `duplex` to send a streamed body.
    duplex: 'half',
  })
}

const ANY_ORIGIN: [string, string][] = [
  ['access-control-allow-origin', '*'],
  ['access-control-expose-headers', CORS_EXPOSE_HEADERS],
]

/** The CORS headers of an answer to a request from `origin`, as pairs. */
function corsHeaders(origin: string | null): [string, string][] {
  return origin === null
    ? ANY_ORIGIN
    : [
        ['access-control-allow-origin', origin],
        ['access-control-expose-headers', CORS_EXPOSE_HEADERS],
        ['vary', 'Origin'],
      ]
}

function withCors(response: Response, origin: string | null): Response {
  for (const [name, value] of corsHeaders(origin)) {
    response.headers.set(name, value)
  }
  return response
}

function notFound(sandbox: SandboxCore, request: Request): Response {
  const url = new URL(request.url)
  return new SandboxError(
    'not_found',
    `${request.method} ${url.pathname} is not served here. The API is POST /v1/customers and POST /v2/tokens; the sandbox's own calls are under /__sandbox/.`,
  ).toResponse(
    `req_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`,
    sandbox.options.errorFormat,
  )
}

export { DataFileError, readDataFile }
export type { FlushInfo }
