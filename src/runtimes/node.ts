// The standalone server on node:http: sockets, timeouts, malformed HTTP and listen, around the server's web app.
import {
  createServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { NodeRequest, sendNodeResponse } from 'srvx/node'
import { z } from 'zod'
import {
  DataFileError,
  readDataFile,
  type FlushInfo,
} from '../model/data-file.ts'
import { findUrlStore, urlStoreSchemes } from '../model/stores.ts'
import { SandboxError, STATUS_TEXT } from '../request/errors.ts'
import { payloadTooLarge } from '../request/validation.ts'
import type { SandboxOptions } from '../options.ts'
import { SERVER_DEFAULTS } from '../defaults.ts'
import {
  JS_NAMING,
  optionsRangeError,
  optionsTypeError,
  wholeNumber,
  type OptionNaming,
} from '../option-messages.ts'
import type { SandboxCore } from '../sandbox.ts'
import { checkWire } from './node-edge.ts'
import {
  createServerApp,
  SandboxStartError,
  type RequestLog,
} from './server-app.ts'

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
   * write): loaded on start (created when missing) and locked
   * against a second server. Each write is on disk (fdatasync) before its
   * `201`; a write that cannot be stored is a `503 storage_unavailable`.
   * @default undefined
   * @example createSandboxServer({ dataFile: 'sandbox.json' })
   */
  dataFile?: string
  /**
   * Keeps the sandbox in Redis (7 or later) or Valkey, which several
   * replicas of the server share, behind a load balancer: a `201` from any
   * replica is in Redis, and every replica answers its next request from
   * what Redis holds. A Redis that cannot be reached at start is an error;
   * while it is away, calls answer `503 storage_unavailable`. Not beside
   * `dataFile`. `namespace` begins every key, so that several sandboxes
   * share one Redis; `cacheRecords` (50,000 by default) bounds the customers
   * and tokens a replica keeps loaded: past it, it lets go of the accounts
   * no request used for longest, and loads one again when a request asks.
   * @default undefined
   * @example createSandboxServer({ store: 'redis://127.0.0.1:6379/0' })
   */
  store?: string | { url: string; namespace?: string; cacheRecords?: number }
  /**
   * @deprecated Ignored: with a data file, every write is stored before it
   * is answered.
   */
  dataFileDelayMs?: number
  /**
   * Origins besides the server's own and loopback ones (`http(s)://localhost`,
   * `127.x.x.x`, `[::1]` on any port) that may call `/__sandbox/*` from a
   * browser. Any other `Origin` gets no CORS grant there, and its POST and
   * DELETE calls are `403 forbidden_origin`.
   * @default []
   * @example createSandboxServer({ adminOrigins: ['https://dev.example.test'] })
   */
  adminOrigins?: readonly string[]
  /**
   * Host names besides loopback ones that `/__sandbox/*` answers on a server
   * listening on loopback (a local proxy's name); any other `Host` is
   * `421 host_not_allowed` there, which stops DNS rebinding.
   * @default []
   * @example createSandboxServer({ allowedHosts: ['sandbox.internal'] })
   */
  allowedHosts?: readonly string[]
  /**
   * Milliseconds a client has to send a request's headers; then `408 request_timeout` and the connection closes.
   * @default 10000
   * @example createSandboxServer({ headersTimeout: 5_000 })
   */
  headersTimeout?: number
  /**
   * Milliseconds a client has to send a whole request, body included; then
   * `408 request_timeout` and the connection closes. At least `headersTimeout`.
   * @default 30000
   * @example createSandboxServer({ requestTimeout: 60_000 })
   */
  requestTimeout?: number
  /**
   * Milliseconds an idle keep-alive connection stays open.
   * @default 5000
   * @example createSandboxServer({ keepAliveTimeout: 1_000 })
   */
  keepAliveTimeout?: number
  /**
   * Milliseconds an answer may wait on a client that takes none of it: once
   * the connection's buffers are full, and no byte more has left for this
   * long, the connection closes. Nothing counts while no answer is waiting
   * to be sent (a scenario's delay, an idle keep-alive connection) or while
   * the client keeps taking bytes.
   * @default 60000
   * @example createSandboxServer({ sendTimeout: 10_000 })
   */
  sendTimeout?: number
  /**
   * The most header fields a request may carry; more is `431 headers_too_large`.
   * @default 100
   * @example createSandboxServer({ maxHeadersCount: 200 })
   */
  maxHeadersCount?: number
  /**
   * The most open connections; node:http closes any beyond at once. As many
   * clients connecting at once wait in the listen queue (up to the system's
   * cap, `net.core.somaxconn` on Linux) rather than being turned away.
   * @default 1024
   * @example createSandboxServer({ maxConnections: 4096 })
   */
  maxConnections?: number
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
  /** Whether the data came from the store: a data file that held data, or a shared store that already held this sandbox. */
  loadedFromFile: boolean
  /**
   * Options that only shape the data a new store is seeded with (`seed`,
   * `customersPerAccount`, `fixtures`), given other values than the
   * sandbox a shared store already held was seeded with: unused, since the
   * store's data fixes them. Empty otherwise.
   * @example server.unusedOptions // [{ option: 'seed', fleet: 1, own: 7 }]
   */
  unusedOptions: readonly {
    option: string
    fleet: string | number | boolean
    own: string | number | boolean
  }[]
  /** The playground's URL, or null when none is served (not built, or `playground: false`). */
  playgroundUrl: string | null
  /** Stops accepting connections, closes the open ones and flushes the data file. */
  close(): Promise<void>
}

/** Defaults of the server's limits, in milliseconds and counts: the part of `SERVER_DEFAULTS` they are, kept public under this name. */
export const DEFAULT_SERVER_LIMITS = {
  headersTimeout: SERVER_DEFAULTS.headersTimeout,
  requestTimeout: SERVER_DEFAULTS.requestTimeout,
  keepAliveTimeout: SERVER_DEFAULTS.keepAliveTimeout,
  sendTimeout: SERVER_DEFAULTS.sendTimeout,
  maxHeadersCount: SERVER_DEFAULTS.maxHeadersCount,
  maxConnections: SERVER_DEFAULTS.maxConnections,
} as const

const fn = z.custom<(...args: never[]) => unknown>(
  (value) => typeof value === 'function',
  { message: 'must be a function' },
)

// node:http's timers and counts take 32-bit signed values.
const serverLimit = () => wholeNumber(1, 2 ** 31 - 1)

// A URL that one of the stores names (`src/model/stores.ts`).
const storeUrl = z.string().refine((url) => findUrlStore(url) !== undefined, {
  message: `must be a ${urlStoreSchemes()} URL`,
})

// The server's own options, types and bounds. A config file's JSON reaches
// here unchecked.
const ServerOptionsSchema = z.object({
  port: wholeNumber(0, 65_535),
  host: z.string().min(1, { message: 'must not be empty' }),
  dataFile: z.string().min(1, { message: 'must not be empty' }),
  store: z.union([
    storeUrl,
    z.object({
      url: storeUrl,
      namespace: z
        .string()
        .regex(/^[\w.-]{1,64}$/)
        .optional(),
      cacheRecords: wholeNumber(1, 100_000_000).optional(),
    }),
  ]),
  adminOrigins: z.array(z.string()),
  allowedHosts: z.array(z.string()),
  headersTimeout: serverLimit(),
  requestTimeout: serverLimit(),
  keepAliveTimeout: serverLimit(),
  sendTimeout: serverLimit(),
  maxHeadersCount: serverLimit(),
  maxConnections: serverLimit(),
  onLog: fn,
  onFlush: fn,
  playground: z.union([z.string(), z.literal(false)]),
})

/** Throws a `TypeError` naming the first server option of the wrong type or out of its bounds. */
function checkServerOptions(options: SandboxServerOptions): void {
  // The sandbox's own options are left to createSandbox, which checks them.
  const parsed = ServerOptionsSchema.partial().safeParse(options)
  if (parsed.success) return
  throw optionsTypeError(
    parsed.error,
    'start the sandbox server',
    'SandboxServerOptions',
  )
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
  checkServerOptions(options)
  const {
    port = SERVER_DEFAULTS.port,
    host = SERVER_DEFAULTS.host,
    dataFileDelayMs: _deprecated,
    headersTimeout = SERVER_DEFAULTS.headersTimeout,
    requestTimeout = SERVER_DEFAULTS.requestTimeout,
    keepAliveTimeout = SERVER_DEFAULTS.keepAliveTimeout,
    sendTimeout = SERVER_DEFAULTS.sendTimeout,
    maxHeadersCount = SERVER_DEFAULTS.maxHeadersCount,
    maxConnections = SERVER_DEFAULTS.maxConnections,
    ...appOptions
  } = options
  if (headersTimeout > requestTimeout) {
    // @note The JavaScript API keeps its words; the CLI names its flags.
    const name = (naming: OptionNaming, option: string) =>
      naming === JS_NAMING ? option : naming.name(option)
    throw optionsRangeError(
      (naming) =>
        `Failed to start the sandbox server: ${name(naming, 'headersTimeout')} (${headersTimeout}) must not exceed ${name(naming, 'requestTimeout')} (${requestTimeout}).`,
    )
  }
  const app = await createServerApp({ ...appOptions, host })
  const baseOrigin = app.sandbox.options.baseUrl?.origin
  const { maxBodyBytes } = app.sandbox.options

  /** Writes an answer; a body still coming is not read but cut off. */
  const send = async (
    req: IncomingMessage,
    res: ServerResponse,
    response: Response,
  ): Promise<void> => {
    // @note Node would read (and drop) the rest of the body to keep the
    // connection: after an early refusal that can be gigabytes. Closing
    // (`Connection: close`) makes it destroy the socket once the answer is
    // out. What already arrived is parsed first (one turn of the event
    // loop), so that a small body sent with its headers keeps the connection.
    if (!req.complete) {
      await new Promise((resolve) => setImmediate(resolve))
      if (!req.complete) {
        res.shouldKeepAlive = false
        lingerOnClose(req.socket)
      }
    }
    const sent = sendNodeResponse(res, response)
    // @note The answer is with node:http now: what the system did not take
    // is still queued, or a streamed body is still to come. Only then is
    // there a stall to watch for.
    watchStall(req.socket, res)
    await sent
  }

  const serve = async (
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> => {
    const url = checkWire(req, maxHeadersCount, baseOrigin)
    if (url instanceof SandboxError) {
      return send(req, res, app.refuse(url, req.method ?? 'GET', req.url ?? ''))
    }
    if (unmet.has(req)) {
      return send(
        req,
        res,
        app.refuse(
          new SandboxError(
            'expectation_failed',
            `The server meets no expectation but 100-continue, not Expect: ${JSON.stringify((req.headers.expect ?? '').slice(0, 100))}; send the request without it.`,
          ),
          req.method ?? 'GET',
          req.url ?? '',
        ),
      )
    }
    const request = new ServerRequest(
      { req, res },
      maxBodyBytes,
      awaitingContinue.has(req),
    )
    // @note srvx would build the URL from `Host`; checkWire built it from
    // the path. `_url` is srvx's documented slot for a URL built elsewhere.
    Object.assign(request, { _url: url })
    const response = await app.fetch(request)
    // A scenario asked for a network error: drop the connection unanswered.
    if (response.status === 0) res.destroy()
    else await send(req, res, response)
  }

  /** Answers a failure outside the app (while sending) with a 500 problem, or cuts an answer begun. */
  const lastResort = (res: ServerResponse, error: unknown): void => {
    // Rendered (and reported with its request id) even when it cannot be sent.
    const response = app.answerError(error)
    if (res.headersSent || res.destroyed) {
      res.destroy()
      return
    }
    res.shouldKeepAlive = false
    sendNodeResponse(res, response).catch(() => res.destroy())
  }

  /** Writes `error` straight to `socket`, rendered by the app, then closes it. */
  const answerRaw = (socket: Duplex, error: SandboxError): void => {
    toRawAnswer(app.answerError(error)).then(
      (raw) => {
        if (socket.writable) socket.end(raw, () => socket.destroy())
        else socket.destroy()
      },
      () => socket.destroy(),
    )
  }

  // Requests with an `Expect` the server does not meet, and those whose
  // client waits for `100 Continue` before it sends the body.
  const unmet = new WeakSet<IncomingMessage>()
  const awaitingContinue = new WeakSet<IncomingMessage>()
  const watchStall = createStallWatch(sendTimeout)
  const sockets = new Set<Socket>()
  // The last answer each connection has begun or queued.
  const answering = new WeakMap<Socket, ServerResponse>()
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const run = (): void => {
      // @note A client that sent its requests and left gets none of the
      // answers: work on them would only hold the event loop (thousands of
      // pipelined admin reads). Nothing more is run on this connection.
      if (req.socket.destroyed || res.destroyed) return
      try {
        serve(req, res).catch((error: unknown) => lastResort(res, error))
      } catch (error) {
        lastResort(res, error)
      }
    }
    // @note Pipelined requests are answered in order anyway: each waits for
    // the answer before it to be handed to the socket. node:http stops
    // reading a connection whose answers back up, but only once they are
    // written; run at once, a 64 KB write of requests would build hundreds
    // of answers in memory for a client that never reads them.
    const before = answering.get(req.socket)
    answering.set(req.socket, res)
    if (before === undefined || before.closed) run()
    else before.once('close', run)
  }
  const server = createServer(
    {
      headersTimeout,
      requestTimeout,
      // The edge answers a missing Host with a problem of its own.
      requireHostHeader: false,
      // How often node:http looks for timed-out requests: often enough for
      // the smallest timeout to hold within a quarter of itself.
      connectionsCheckingInterval: Math.max(
        25,
        Math.min(30_000, Math.floor(headersTimeout / 4)),
      ),
    },
    onRequest,
  )
  server.keepAliveTimeout = keepAliveTimeout
  // @note Left to node:http, `100 Continue` goes out before anything is
  // checked (a 413 from Content-Length followed it) and any other
  // expectation gets a bare 417. The server answers both itself: `100` only
  // once the body is read, so a refusal before that comes at once.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    awaitingContinue.add(req)
    onRequest(req, res)
  })
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    unmet.add(req)
    onRequest(req, res)
  })
  // Counted by the edge, which answers 431 past the limit.
  server.maxHeadersCount = maxHeadersCount + 1
  server.maxConnections = maxConnections
  const refusing = new WeakSet<Duplex>()
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (refusing.has(socket)) return
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy()
      return
    }
    const answer = (): void => {
      if (socket.writable)
        answerRaw(
          socket,
          clientError(error.code, { headersTimeout, requestTimeout }),
        )
      else socket.destroy()
    }
    // @note A fault after whole requests still being answered is the next
    // request's: those before it are answered first, as the client counts
    // answers in order (otherwise a stored create would read as refused).
    const before = answering.get(socket as Socket)
    if (before !== undefined && !before.closed && before.req.complete) {
      refusing.add(socket)
      before.once('close', answer)
      return
    }
    // @note A fault in the body of the request being answered (the client
    // stopped sending mid-body, a bad chunk) is that request's: its read
    // fails with it, and the sandbox's answer, the one journaled, is the one
    // sent, to a client that only half-closed too.
    if (before !== undefined && !before.closed && !before.req.complete) {
      refusing.add(socket)
      cutBody(
        before.req,
        error.code === 'HPE_INVALID_EOF_STATE'
          ? cutShort()
          : clientError(error.code, { headersTimeout, requestTimeout }),
      )
      before.once('close', () => (socket as Socket).end())
      return
    }
    // The answer node:http has begun on this socket, if any.
    const open = Reflect.get(socket, '_httpMessage') as
      ServerResponse | undefined
    if (open?.headersSent) {
      socket.destroy()
      return
    }
    answer()
  })
  // @note node:http hands CONNECT (a proxy's tunnel) to this event, and
  // closes the socket unanswered when nobody listens.
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy())
    answerRaw(
      socket,
      new SandboxError(
        'method_not_allowed',
        'This server is no proxy and opens no tunnels: CONNECT is not served. Send requests such as GET /v1/customers to it directly.',
        { headers: { allow: ALL_METHODS } },
      ),
    )
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
              (naming) =>
                `Port ${port} is already in use on ${host}. Stop what uses it, or change ${naming.set('port', port)} to another port (${naming.set('port', 0)} takes a free one).`,
              1,
            )
          : error.code === 'EACCES'
            ? new SandboxStartError(
                (naming) =>
                  `Not allowed to listen on ${host}:${port}; ports below 1024 need privileges. Change ${naming.set('port', port)} to another port (${naming.set('port', 0)} takes a free one).`,
                1,
              )
            : error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND'
              ? new SandboxStartError(
                  (naming) =>
                    `Cannot listen on ${host}: ${error.code === 'ENOTFOUND' ? 'no such host name' : 'it is not an address of this machine'} (${error.code}). Use ${naming.set('host', "'127.0.0.1'")} to serve this machine only, or ${naming.set('host', "'0.0.0.0'")} (with ${naming.name('adminToken')}) to serve every network it is on.`,
                  1,
                )
              : error,
      )
    })
    // `[::1]` as in a URL is the address ::1.
    const listenOn = /^\[.*\]$/.test(host) ? host.slice(1, -1) : host
    // @note Node's backlog of 511 reset some of a burst of a thousand
    // clients connecting at once; the system caps it (net.core.somaxconn).
    server.listen({ port, host: listenOn, backlog: maxConnections }, () =>
      resolve(),
    )
  }).catch(async (error: unknown) => {
    await app.close()
    throw error
  })
  const address = server.address() as AddressInfo
  const shownHost =
    address.family === 'IPv6' ? `[${address.address}]` : address.address
  let closing: Promise<void> | undefined

  return {
    url: `http://${shownHost}:${address.port}`,
    port: address.port,
    sandbox: app.sandbox,
    loadedFromFile: app.loadedFromFile,
    unusedOptions: app.unusedOptions,
    playgroundUrl: app.playground
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
        await app.close()
      })()
      return closing
    },
  }
}

/**
 * srvx's request over node:http, whose body the sandbox reads once as bytes
 * straight from node's stream, with a running limit: no web stream and no
 * native `Request` is built on the way. Every way to read the body shares
 * that one read, `body` too: srvx's own getter builds a web stream over the
 * socket, which, unread beside a read of the bytes, paused the socket once
 * its queue was full, and that read never ended.
 */
class ServerRequest extends NodeRequest {
  readonly #req: IncomingMessage
  readonly #maxBytes: number
  readonly #res: ServerResponse
  #awaitingContinue: boolean
  #used = false
  #body: ReadableStream<Uint8Array<ArrayBuffer>> | undefined

  constructor(
    context: { req: IncomingMessage; res: ServerResponse },
    maxBytes: number,
    awaitingContinue = false,
  ) {
    super(context)
    this.#req = context.req
    this.#res = context.res
    this.#maxBytes = maxBytes
    this.#awaitingContinue = awaitingContinue
  }

  get #hasBody(): boolean {
    return this.method !== 'GET' && this.method !== 'HEAD'
  }

  /** The body's bytes as node read them: no copy. */
  override bytes(): Promise<Uint8Array<ArrayBuffer>> {
    if (!this.#hasBody) return Promise.resolve(new Uint8Array(0))
    if (this.#used) {
      return Promise.reject(
        new TypeError('Body is unusable: it was read already.'),
      )
    }
    this.#used = true
    const req = this.#req
    const maxBytes = this.#maxBytes
    // The client sends the body once told to: the checks before passed.
    if (this.#awaitingContinue) {
      this.#awaitingContinue = false
      if (!this.#res.headersSent) this.#res.writeContinue()
    }
    return new Promise((resolve, reject) => {
      const chunks: Buffer<ArrayBuffer>[] = []
      let size = 0
      const onData = (chunk: Buffer<ArrayBuffer>): void => {
        size += chunk.length
        if (size > maxBytes) {
          // @note Stop reading, not destroy: the 413 must still be sent;
          // node:http closes the connection after it (`Connection: close`).
          req.off('data', onData)
          req.pause()
          reject(payloadTooLarge(maxBytes))
          return
        }
        chunks.push(chunk)
      }
      req.on('data', onData)
      req.once('end', () => {
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))
      })
      whenCut(req, () => reject((req as CuttableRequest)[FAULT] ?? cutShort()))
    })
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes()
    return bytes.buffer.slice(
      bytes.byteOffset,
      bytes.byteOffset + bytes.byteLength,
    )
  }

  // @note Through bytes(): srvx's own would read the socket a second time
  // beside it, and skip the limit and the `100 Continue`.
  override async text(): Promise<string> {
    return UTF8.decode(await this.bytes())
  }

  override async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown
  }

  /**
   * A stream over {@link bytes}: it reads nothing until read, then gives
   * the whole body as one chunk, or the read's error.
   */
  override get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
    if (!this.#hasBody) return null
    this.#body ??= new ReadableStream(
      {
        pull: async (controller) => {
          try {
            const bytes = await this.bytes()
            if (bytes.byteLength > 0) controller.enqueue(bytes)
            controller.close()
          } catch (error) {
            controller.error(error)
          }
        },
        cancel: () => {
          this.#used = true
        },
      },
      // @note Not pulled before it is read: asking whether there is a body
      // neither reads it nor sends a `100 Continue`.
      { highWaterMark: 0 },
    )
    return this.#body
  }

  override get bodyUsed(): boolean {
    return this.#used
  }
}

// As a web Request's text(): a leading BOM dropped, bad UTF-8 read as U+FFFD.
const UTF8 = new TextDecoder()

/**
 * Calls `cut` once if the client goes away before the whole body has come:
 * now, when it left while the sandbox waited (a slow persona, a delay), or
 * later. Node emits no more events for a request that is already destroyed.
 */
function whenCut(req: IncomingMessage, cut: () => void): void {
  if (
    (req as CuttableRequest)[FAULT] ||
    (req.destroyed && !req.readableEnded)
  ) {
    cut()
    return
  }
  ;(req as CuttableRequest)[CUT] = cut
  req.once('error', cut)
  req.once('close', () => {
    if (!req.readableEnded) cut()
  })
}

// Kept on a request whose body node:http's parser gave up on: the error
// its read fails with, and how to fail a read under way (no map entry or
// listener more per request).
const FAULT = Symbol('fault')
const CUT = Symbol('cut')
type CuttableRequest = IncomingMessage & {
  [FAULT]?: SandboxError
  [CUT]?: () => void
}

/**
 * Fails the read of `req`'s body with `error`, now or when it begins: the
 * parser gave up on the connection, and no more of the body will come.
 */
function cutBody(req: IncomingMessage, error: SandboxError): void {
  ;(req as CuttableRequest)[FAULT] = error
  ;(req as CuttableRequest)[CUT]?.()
}

// A client that stops sending gets an answer it will never read; the journal
// still says what happened, not that the sandbox failed.
const cutShort = (): SandboxError =>
  new SandboxError(
    'invalid_json',
    'The request body ended early: the client stopped sending it.',
  )

// How long a connection lingers after a refused body's answer, and how much
// of that body is still read and dropped meanwhile.
const LINGER_MS = 2000
const LINGER_BYTES = 1_048_576

/**
 * Makes node:http's close of `socket` after its answer a lingering one:
 * closing with unread data sends a reset, which makes the client's system
 * discard the answer if the client has not read it yet. The answer is
 * followed by a half-close; up to `LINGER_BYTES` of what the client still
 * sends is read and dropped (enough for a client that sends its whole body
 * before reading), then reading stops, so that a client still sending
 * stalls and reads its answer; the socket goes after `LINGER_MS`.
 */
function lingerOnClose(socket: Socket): void {
  Reflect.set(socket, 'destroySoon', () => {
    socket.end()
    // The HTTP parser is done with this connection; nothing more is parsed.
    socket.removeAllListeners('data')
    let read = 0
    const timer = setTimeout(() => socket.destroy(), LINGER_MS)
    timer.unref()
    socket.on('data', (chunk: Buffer) => {
      read += chunk.length
      if (read > LINGER_BYTES) socket.pause()
    })
    socket.once('close', () => clearTimeout(timer))
    socket.resume()
  })
}

// How many looks in a row must find a stalled socket's queue unchanged
// before it is closed: a stall is cut between the limit and a quarter more.
const STALL_CHECKS = 4

/**
 * Returns `watch(socket, res)`, called once `res` has been handed to
 * node:http, which closes `socket` once bytes queued on it have not moved
 * for `limit` milliseconds: a client that sent its requests and reads none
 * of the answers would otherwise hold the connection for good, as node:http
 * has no timeout for a write. An answer written whole with nothing left
 * queued (the usual one) costs one look and no timer. The timer of a
 * watched socket stops once its last answer is ended and its queue empty,
 * so a delay before an answer and an idle keep-alive connection are never
 * counted.
 *
 * @example
 * const watchStall = createStallWatch(60_000)
 * res.end(body)
 * watchStall(res.socket, res)
 */
function createStallWatch(
  limit: number,
): (socket: Socket, res: ServerResponse) => void {
  // The last answer of each watched socket.
  const watched = new WeakMap<Socket, ServerResponse>()
  const every = Math.max(1, Math.ceil(limit / STALL_CHECKS))
  return (socket, res) => {
    // A streamed body (not ended yet) is written later: watched from now.
    if (res.writableEnded && socket.writableLength === 0) return
    if (socket.destroyed) return
    const watching = watched.has(socket)
    watched.set(socket, res)
    if (watching) return
    let last = queued(socket)
    let still = 0
    const check = (): void => {
      const now = queued(socket)
      if (socket.writableLength > 0) {
        // @note Counted in looks, not measured in time: after the event loop
        // was held up, the first look comes before the writes it held up.
        still = now === last ? still + 1 : 0
        if (still >= STALL_CHECKS) {
          socket.destroy()
          return
        }
      } else if (watched.get(socket)?.writableEnded !== false) {
        watched.delete(socket)
        socket.off('close', stop)
        return
      } else still = 0
      last = now
      timer.refresh()
    }
    const timer = setTimeout(check, every).unref()
    const stop = (): void => clearTimeout(timer)
    socket.once('close', stop)
  }
}

/**
 * What is queued on `socket`, as a key that changes whenever bytes leave:
 * node's queue shrinks as whole writes complete, libuv's (`writeQueueSize`)
 * as the system takes part of one, so a slow reader of one large answer
 * shows progress too.
 */
function queued(socket: Socket): string {
  const handle = Reflect.get(socket, '_handle') as {
    writeQueueSize?: number
  } | null
  return `${socket.writableLength}/${handle?.writeQueueSize ?? 0}`
}

const HEADER_LINES =
  ': each header line is "Name: value" ending in CRLF, with no space in the name, no control character and no folded continuation line'
const FRAMING =
  ': frame a body with one Content-Length of digits or with Transfer-Encoding: chunked, never both'
const CHUNKS =
  ': each chunk of a chunked body is its hexadecimal size, CRLF, the data and CRLF, and the body ends with 0 CRLF CRLF'

/** What to fix, by the code of node:http's parser. */
const PARSE_HINTS: Record<string, string> = {
  HPE_INVALID_METHOD:
    ': the method must be one HTTP knows, in upper case (POST, GET, …)',
  HPE_PAUSED_H2_UPGRADE: ': this server speaks HTTP/1.1 only, not HTTP/2',
  HPE_INVALID_VERSION:
    ': the request line is "METHOD /path HTTP/1.1" ending in CRLF',
  HPE_INVALID_CONSTANT:
    ': the request line is "METHOD /path HTTP/1.1" ending in CRLF, with a path that holds no space',
  HPE_INVALID_HEADER_TOKEN: HEADER_LINES,
  HPE_CR_EXPECTED: HEADER_LINES,
  HPE_LF_EXPECTED: HEADER_LINES,
  HPE_INVALID_CONTENT_LENGTH: FRAMING,
  HPE_UNEXPECTED_CONTENT_LENGTH: FRAMING,
  HPE_INVALID_TRANSFER_ENCODING: FRAMING,
  HPE_INVALID_CHUNK_SIZE: CHUNKS,
  HPE_STRICT: CHUNKS,
  HPE_INVALID_EOF_STATE:
    ': the client ended the connection in the middle of a request',
}

/**
 * The error of a request node:http could not take (a timeout, headers too
 * large, malformed HTTP), which names the limit or what to fix.
 */
function clientError(
  code: string | undefined,
  limits: { headersTimeout: number; requestTimeout: number },
): SandboxError {
  return code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? new SandboxError(
        'request_timeout',
        `The request did not arrive in time: headers within ${limits.headersTimeout} ms (headersTimeout, --headers-timeout) and the whole request within ${limits.requestTimeout} ms (requestTimeout, --request-timeout).`,
      )
    : code === 'HPE_HEADER_OVERFLOW'
      ? new SandboxError(
          'headers_too_large',
          "The request's headers are over 16 KiB, node:http's limit.",
        )
      : new SandboxError(
          'invalid_request',
          `This is not an HTTP/1.1 request the server can read (${code ?? 'malformed'})${PARSE_HINTS[code ?? ''] ?? ''}.`,
        )
}

/** The methods some path of the server takes, for a request that names none. */
const ALL_METHODS = 'GET, HEAD, POST, DELETE, OPTIONS'

/**
 * `response` as a whole HTTP/1.1 answer, written straight to a socket that
 * node:http no longer parses, after which it closes.
 */
async function toRawAnswer(response: Response): Promise<Buffer> {
  const body = Buffer.from(await response.arrayBuffer())
  const head = [
    `HTTP/1.1 ${response.status} ${STATUS_TEXT[response.status] ?? response.statusText}`,
  ]
  for (const [name, value] of response.headers) {
    if (!FRAMED_HERE.has(name)) head.push(`${name}: ${value}`)
  }
  head.push(`content-length: ${body.length}`, 'connection: close', '', '')
  return Buffer.concat([Buffer.from(head.join('\r\n'), 'latin1'), body])
}

// Headers of the framing, which the raw answer sets itself.
const FRAMED_HERE = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
])

export { DataFileError, readDataFile, SandboxStartError }
export {
  CORS_ALLOW_HEADERS,
  CORS_EXPOSE_HEADERS,
  isLoopback,
} from './server-app.ts'
export type { Explain, OptionNaming } from '../option-messages.ts'
export type { FlushInfo, RequestLog }
