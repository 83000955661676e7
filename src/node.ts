import {
  createServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { FastResponse, toNodeHandler } from 'srvx/node'
import { createSandboxCore } from './sandbox-core.ts'
import {
  createDataFileWriter,
  DataFileError,
  readDataFile,
  writeFileAtomic,
  type DataFileWriter,
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
   * Keeps the data in this JSON file: loaded on start (created when missing),
   * written at most `dataFileDelayMs` after each change and on close.
   * @default undefined
   * @example createSandboxServer({ dataFile: 'sandbox.json' })
   */
  dataFile?: string
  /**
   * How far behind the sandbox the data file may fall, in milliseconds.
   * @default 200
   */
  dataFileDelayMs?: number
  /** Called once per request answered. */
  onLog?: (log: RequestLog) => void
  /** Called after each completed write of the data file. */
  onFlush?: (info: FlushInfo) => void
}

/** A running sandbox server. */
export interface SandboxServer {
  /** Its base URL, e.g. `http://127.0.0.1:4100`. */
  url: string
  port: number
  sandbox: SandboxCore
  /** Whether the data came from an existing data file. */
  loadedFromFile: boolean
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
    dataFileDelayMs = 200,
    onLog,
    onFlush,
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

  let writer: DataFileWriter | undefined
  const pending = new Map<string, JournalEntry>()
  const { sandbox } = createSandboxCore(
    {
      // A replayed session keeps the determinism it was recorded with.
      ...(sandboxOptions.from === undefined && { deterministic: false }),
      ...sandboxOptions,
      onRequest(entry) {
        sandboxOptions.onRequest?.(entry)
        if (onLog) pending.set(entry.request_id, entry)
        if (entry.status >= 200 && entry.status < 300) writer?.markDirty()
      },
    },
    // srvx's FastResponse answers without building a web stream per response.
    { Response: FastResponse, streamedBodies: true },
  )
  await sandbox.ready

  let loadedFromFile = false
  if (dataFile !== undefined) {
    const data = await readDataFile(dataFile)
    if (data === undefined) {
      await writeFileAtomic(dataFile, JSON.stringify(sandbox.dump()))
    } else {
      try {
        await sandbox.load(data)
      } catch (error) {
        throw new DataFileError(
          `The data file ${dataFile} cannot be used: ${(error as Error).message.replace(/^Failed to load sandbox data: /, '')} It was left untouched; move it away or pass another --data-file.`,
        )
      }
      loadedFromFile = true
    }
    writer = createDataFileWriter(dataFile, sandbox, {
      maxDelayMs: dataFileDelayMs,
      ...(onFlush && { onFlush }),
      onError: (error) =>
        console.error(
          `Failed to write the data file ${dataFile}: ${error.message}`,
        ),
    })
  }

  const baseOrigin = sandbox.options.baseUrl?.origin
  const fetchHandler = async (request: Request): Promise<Response> => {
    const started = performance.now()
    const origin = request.headers.get('origin')
    if (
      request.method === 'OPTIONS' &&
      request.headers.has('access-control-request-method')
    ) {
      return withCors(
        new Response(null, {
          status: 204,
          headers: {
            'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
            'access-control-allow-headers': CORS_ALLOW_HEADERS,
            'access-control-max-age': '600',
          },
        }),
        origin,
      )
    }
    // @note With a baseUrl, its path prefix applies on the server's own origin.
    const routed =
      baseOrigin === undefined ? request : rebase(request, baseOrigin)
    let response = await (sandbox.handle(routed) ?? notFound(sandbox, request))
    if (response.status === 0) {
      // A scenario asked for a network error: drop the connection unanswered.
      const node = (
        request as { runtime?: { node?: { res?: ServerResponse } } }
      ).runtime?.node
      node?.res?.destroy()
      return new Response(null, { status: 204 })
    }
    const url = new URL(request.url)
    if (
      writer &&
      request.method !== 'GET' &&
      response.status < 300 &&
      url.pathname.includes('/__sandbox/')
    ) {
      writer.markDirty()
    }
    if (response.status === 413) response.headers.set('connection', 'close')
    response = withCors(response, origin)
    if (onLog) {
      const requestId = response.headers.get('x-request-id')
      const entry = requestId === null ? undefined : pending.get(requestId)
      if (requestId !== null) pending.delete(requestId)
      onLog({
        request_id: requestId,
        method: request.method,
        path: url.pathname,
        status: response.status,
        duration_ms: Math.round((performance.now() - started) * 100) / 100,
        account_id: entry?.account_id ?? null,
        credential: entry?.credential ?? null,
        code: entry?.code ?? null,
      })
    }
    return response
  }

  const nodeHandler = toNodeHandler(fetchHandler)
  const sockets = new Set<Socket>()
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void nodeHandler(req as never, res as never)
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
        await writer?.flush()
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

function withCors(response: Response, origin: string | null): Response {
  response.headers.set('access-control-allow-origin', origin ?? '*')
  response.headers.set('access-control-expose-headers', CORS_EXPOSE_HEADERS)
  if (origin !== null) response.headers.append('vary', 'Origin')
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

export { DataFileError }
export type { FlushInfo }
