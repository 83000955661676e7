// record: a proxy to the live service that appends each exchange to a session file.
import {
  createServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http'
import type { AddressInfo } from 'node:net'
import { open, rm } from 'node:fs/promises'
import {
  DEFAULT_MAX_BODY,
  explainNetworkError,
  explainWriteError,
  formatBytes,
  isDecoded,
  readJson,
} from './bounded-body.ts'
import {
  RECORDING_FORMAT,
  type RecordedExchange,
  type RecordingHeader,
} from '../model/session-file.ts'
import { DEFAULT_ACCOUNTS } from '../../fixtures/demo-keys.ts'
import { createSandboxCore } from '../sandbox-core.ts'
import { maskSecret } from '../model/secrets.ts'
import { sandboxOptionsOf } from './verify/config.ts'

/** Options of `startRecorder()`. */
export interface RecorderOptions {
  /** The live service's base URL. */
  target: string
  /**
   * The session file, created: a header line, then one line appended per
   * exchange. A file already at this path is never replaced; starting fails.
   */
  file: string
  /** @default 0 (a free port) */
  port?: number
  /** @default '127.0.0.1' */
  host?: string
  /** Sandbox options (and server options, ignored here) the session starts from. */
  config?: Record<string, unknown>
  /** Time to wait for the service's answer, in milliseconds. @default 30000 */
  timeoutMs?: number
  /**
   * The most bytes of an answer's decoded body kept in the file; a larger
   * answer still reaches the client whole, and is kept as its headers and a note.
   * @default 8 MB
   */
  maxBody?: number
  /**
   * Keeps the tokens the service mints, and the API keys of the fixtures
   * that `config` gives, in full, so that `--from` lets a client holding one
   * in. Off, they are masked: they are the live service's credentials, and
   * fixture keys may be copies of its keys. The credential of each exchange
   * is masked either way, as are other API keys the exchanges show.
   * @default false
   */
  keepSecrets?: boolean
  /** Called after each exchange is saved. */
  onExchange?: (exchange: RecordedExchange) => void
  /** Called when the session file cannot be written. */
  onError?: (error: Error) => void
}

/** A running recorder. */
export interface Recorder {
  url: string
  file: string
  /** Exchanges appended to the file so far. */
  readonly saved: number
  /** Exchanges that could not be appended (a full disk), and why the first could not. */
  readonly unsaved: { count: number; reason?: string }
  /** Stops listening, ends the calls in flight and saves them, then closes the file. */
  close(): Promise<void>
}

// The largest request body the recorder forwards; a proxy must hold it in memory.
const MAX_BODY = 16 * 1024 * 1024
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'content-encoding',
  'host',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
])

/**
 * The masked form of an `Authorization` value: the scheme and a masked credential.
 *
 * @example
 * maskAuthorization('Bearer sk_test_DemoKeyForTheSandbox0001') // 'Bearer sk_test_…0001'
 */
export function maskAuthorization(value: string): string {
  const [scheme, ...rest] = value.trim().split(/\s+/)
  const credential = rest.join(' ')
  return credential ? `${scheme} ${maskSecret(credential)}` : (scheme ?? '')
}

// The documented keys, public by design (the README, the banner, `fixtures/`):
// a recording keeps them, so that `--from` lets their holders in.
const DOCUMENTED_KEYS: ReadonlySet<string> = new Set(
  DEFAULT_ACCOUNTS.flatMap((account) => account.apiKeys.map((k) => k.key)),
)

/**
 * Masks, in a recording's starting session, the secret of every API key
 * that is not a documented one: in its data, and in the fixtures of its
 * options, where a `config` gave them.
 */
function maskOwnKeys(session: RecordingHeader['session']): void {
  const mask = (secret: string): string =>
    DOCUMENTED_KEYS.has(secret) ? secret : maskSecret(secret)
  for (const key of session.data.api_keys)
    if (typeof key.secret === 'string') key.secret = mask(key.secret)
  const fixtures = session.options.fixtures as
    { accounts?: { apiKeys?: { key: string }[] }[] } | undefined
  for (const account of fixtures?.accounts ?? [])
    for (const key of account.apiKeys ?? []) key.key = mask(key.key)
}

/**
 * A body with every known secret masked; a token an answer carries becomes
 * known (and is masked) unless `keep` holds the tokens kept in full.
 */
function maskBody(
  text: string,
  secrets: Set<string>,
  keep: Set<string> | undefined,
): string {
  let out = text
  // Not JSON (or too deeply nested): only the known secrets are masked.
  const json = readJson(text).json as Record<string, unknown> | undefined
  if (json && typeof json === 'object' && typeof json.token === 'string') {
    if (keep) keep.add(json.token)
    else {
      secrets.add(json.token)
      out = JSON.stringify({ ...json, token: maskSecret(json.token) })
    }
  }
  return maskKnown(out, secrets)
}

/** `text` with every known secret in it masked. */
function maskKnown(text: string, secrets: Set<string>): string {
  let out = text
  for (const secret of secrets)
    if (secret.length >= 8) out = out.split(secret).join(maskSecret(secret))
  return out
}

/** `headers` with every known secret in their values masked. */
const maskHeaders = (
  headers: Record<string, string>,
  secrets: Set<string>,
): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      maskKnown(value, secrets),
    ]),
  )

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY) {
        reject(
          new RangeError(
            `request bodies above ${formatBytes(MAX_BODY)} are not forwarded`,
          ),
        )
        req.destroy()
      } else chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })

/** Writes `chunk` to the client, waiting while its buffer is full; false once it is gone. */
function forward(res: ServerResponse, chunk: Uint8Array): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false)
  if (res.write(chunk)) return Promise.resolve(true)
  return new Promise((resolve) => {
    const done = (writable: boolean) => () => {
      res.off('drain', drained)
      res.off('close', closed)
      resolve(writable)
    }
    const drained = done(true)
    const closed = done(false)
    res.once('drain', drained)
    res.once('close', closed)
  })
}

/**
 * Starts a pass-through proxy to `target` that appends every exchange,
 * secrets masked, to `file` as it happens: a header line, then one JSON line
 * per exchange. `readSessionFile()` (and so `--from`, `verify --from` and
 * `createSandbox({ from })`) reads it as a session with the customers the
 * service created. Answers stream through to the client; at most `maxBody`
 * bytes of each are held.
 *
 * @example
 * const recorder = await startRecorder({ target: 'https://staging.acme.test', file: 'session.jsonl' })
 * // point the client at recorder.url, then:
 * await recorder.close()
 * @see readSessionFile
 */
export async function startRecorder(
  options: RecorderOptions,
): Promise<Recorder> {
  const base = options.target.replace(/\/+$/, '')
  const maxBody = options.maxBody ?? DEFAULT_MAX_BODY
  const secrets = new Set<string>()
  const kept = options.keepSecrets ? new Set<string>() : undefined
  const { sandbox } = createSandboxCore(sandboxOptionsOf(options.config ?? {}))
  await sandbox.ready
  const session = sandbox.export() as unknown as RecordingHeader['session']
  // @note Not the state of a sandbox that drew ids from its seed: the
  // default that the recorder's sandbox resolved made every server started
  // from the file mint predictable secrets. The one that replays it decides.
  delete session.options.deterministic
  // @note The keys a config gives may be copies of the service's: they are
  // masked as the credentials of the exchanges are. `--from` needs them in
  // full only to let their holders in, which is what --keep-secrets asks.
  if (!options.keepSecrets) maskOwnKeys(session)
  const header: RecordingHeader = {
    format: RECORDING_FORMAT,
    version: 1,
    target: base,
    keep_secrets: Boolean(options.keepSecrets),
    session,
  }
  // @note Never replaces a file: a session recorded earlier (the default
  // path is the same each run) may not be recordable again; `x` also fails at
  // once on a FIFO, where opening to write would wait for a reader.
  const file = await open(options.file, 'wx').catch((error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code
    throw new Error(
      code === 'EEXIST'
        ? `${options.file} already exists, and a recording never replaces a file: move it away, or record into another file (--out).`
        : `cannot create the session file ${options.file} (${code ?? (error as Error).message}).`,
    )
  })
  // Bytes of whole lines in the file: where the next line goes.
  let fileBytes = 0
  /**
   * Writes `line` at the end of the whole lines, continuing a short write; a
   * failed one is cut off again, so that no torn line is left for the next
   * exchange to be glued to (and lost with).
   */
  const writeLine = async (line: Buffer): Promise<void> => {
    try {
      for (let done = 0; done < line.length;) {
        const { bytesWritten } = await file.write(
          line,
          done,
          line.length - done,
          fileBytes + done,
        )
        if (bytesWritten === 0) throw new Error('nothing was written')
        done += bytesWritten
      }
    } catch (error) {
      await file.truncate(fileBytes).catch(() => undefined)
      throw error
    }
    fileBytes += line.length
  }
  await writeLine(Buffer.from(`${JSON.stringify(header)}\n`)).catch(
    async (error: unknown) => {
      await file.close()
      await rm(options.file, { force: true })
      throw new Error(
        `cannot write the session file ${options.file} (${explainWriteError(error)}).`,
        { cause: error },
      )
    },
  )
  let saved = 0
  const unsaved: { count: number; reason?: string } = { count: 0 }
  // @note One append at a time, in the order the exchanges ended: each costs
  // its own size, whatever the session holds already.
  let writing: Promise<void> = Promise.resolve()
  const append = (exchange: RecordedExchange): Promise<void> => {
    const line = Buffer.from(`${JSON.stringify(exchange)}\n`)
    // @note A failed write is reported by its own exchange; the next still runs.
    const written = writing
      .catch(() => undefined)
      .then(async () => {
        try {
          await writeLine(line)
        } catch (error) {
          const reason = explainWriteError(error)
          unsaved.count++
          unsaved.reason ??= reason
          throw new Error(
            `${exchange.request.method} ${exchange.request.path} ${exchange.response.status} was answered but not saved to ${options.file} (${reason}); the file keeps the ${saved} saved before it`,
            { cause: error },
          )
        }
        saved++
      })
    writing = written
    return written
  }
  const inFlight = new Set<Promise<void>>()
  const stopping = new AbortController()

  const server = createServer((req, res) => {
    const handled = handle(req, res).catch((error: Error) =>
      options.onError?.(error),
    )
    inFlight.add(handled)
    void handled.finally(() => inFlight.delete(handled))
  })

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const started = performance.now()
    const at = new Date().toISOString()
    const path = req.url ?? '/'
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(req.headers))
      if (value !== undefined && !HOP_BY_HOP.has(name))
        headers[name] = Array.isArray(value) ? value.join(', ') : value
    let body: Buffer = Buffer.alloc(0)
    let status: number
    let responseHeaders: Record<string, string> = {}
    let responseBody: Buffer
    let note: string | undefined
    // @note A timer of this exchange's own, not AbortSignal.timeout(): Node
    // holds that signal weakly, and inside AbortSignal.any() a garbage
    // collection before the deadline dropped it, so an answer that streamed
    // on (collections come often then) was never cut.
    const timeout = new AbortController()
    let timer: NodeJS.Timeout | undefined
    try {
      body = await readBody(req)
      timer = setTimeout(
        () => timeout.abort(new DOMException('Timed out', 'TimeoutError')),
        options.timeoutMs ?? 30_000,
      )
      const answer = await fetch(`${base}${path}`, {
        method: req.method ?? 'GET',
        headers,
        ...(body.length > 0 && { body: new Uint8Array(body) }),
        signal: AbortSignal.any([timeout.signal, stopping.signal]),
        redirect: 'manual',
      })
      status = answer.status
      // @note fetch passes a coding it cannot decode as it came: the client
      // gets the bytes with their Content-Encoding, the file only a note.
      const encoding = answer.headers.get('content-encoding')
      const encoded = !isDecoded(encoding)
      answer.headers.forEach((value, name) => {
        if (!HOP_BY_HOP.has(name)) responseHeaders[name] = value
      })
      if (encoded) responseHeaders['content-encoding'] = encoding!
      res.writeHead(status, responseHeaders)
      // @note Streamed to the client as it comes, with at most `maxBody`
      // bytes held for the file: a larger answer still reaches the client.
      const chunks: Uint8Array[] = []
      let size = 0
      try {
        const reader = answer.body?.getReader()
        for (;;) {
          const read = await reader?.read()
          if (!read || read.done) break
          const chunk = read.value
          size += chunk.byteLength
          if (size <= maxBody) chunks.push(chunk)
          else chunks.length = 0
          if (!(await forward(res, chunk))) {
            note = stopping.signal.aborted
              ? `the recorder stopped after ${formatBytes(size)} of the answer`
              : `the client left after ${formatBytes(size)} of the answer`
            await reader?.cancel().catch(() => undefined)
            break
          }
        }
      } catch (error) {
        note = `the answer ended early after ${formatBytes(size)}: ${stopping.signal.aborted ? 'the recorder stopped' : (error as Error).name === 'TimeoutError' ? `the service did not finish within ${options.timeoutMs ?? 30_000} ms` : explainNetworkError(error)}`
        res.destroy()
      }
      if (encoded) {
        note = `${note ? `${note}; ` : ''}body not kept: it is encoded as ${encoding}, which record cannot decode`
        responseBody = Buffer.alloc(0)
      } else if (size > maxBody) {
        note = `${note ? `${note}; ` : ''}body not kept: the answer (${formatBytes(size)}) is larger than ${formatBytes(maxBody)}; raise --max-body to keep it`
        responseBody = Buffer.alloc(0)
      } else responseBody = Buffer.concat(chunks)
      res.end()
    } catch (error) {
      const reason = stopping.signal.aborted
        ? 'the recorder stopped before the service answered'
        : (error as Error).name === 'TimeoutError'
          ? 'the service did not answer in time'
          : error instanceof RangeError
            ? error.message
            : `the service could not be reached: ${explainNetworkError(error)}`
      status = 502
      responseHeaders = { 'content-type': 'application/problem+json' }
      responseBody = Buffer.from(
        JSON.stringify({
          type: 'about:blank',
          title: 'Bad gateway',
          status: 502,
          detail: `customer-token-sandbox record: ${reason}`,
          code: 'bad_gateway',
        }),
      )
      if (!res.headersSent) res.writeHead(status, responseHeaders)
      res.end(responseBody)
    } finally {
      clearTimeout(timer)
    }
    const credential = headers.authorization?.trim().split(/\s+/)[1] ?? ''
    // @note The key is a secret wherever it shows: a service may echo it in
    // an error's body or in WWW-Authenticate.
    if (credential && !kept?.has(credential)) secrets.add(credential)
    const maskedHeaders = maskHeaders(headers, secrets)
    if (headers.authorization !== undefined && !kept?.has(credential))
      maskedHeaders.authorization = maskAuthorization(headers.authorization)
    const requestBody = maskBody(body.toString('utf8'), secrets, kept)
    const answerBody = maskBody(responseBody.toString('utf8'), secrets, kept)
    const exchange: RecordedExchange = {
      at,
      duration_ms: Math.round(performance.now() - started),
      request: {
        method: req.method ?? 'GET',
        path: maskKnown(path, secrets),
        headers: maskedHeaders,
        body: requestBody,
      },
      response: {
        status,
        headers: maskHeaders(responseHeaders, secrets),
        body: answerBody,
        ...(note !== undefined && { note }),
      },
    }
    await append(exchange)
    options.onExchange?.(exchange)
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve)
  }).catch(async (error: unknown) => {
    await file.close()
    // @note Made by this start (`wx`) and holding only its header: left, it
    // would stop the next start, which never replaces a file.
    await rm(options.file, { force: true })
    throw error
  })
  const { port } = server.address() as AddressInfo
  const host = options.host ?? '127.0.0.1'
  let closing: Promise<void> | undefined
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    file: options.file,
    get saved() {
      return saved
    },
    unsaved,
    close() {
      closing ??= (async () => {
        stopping.abort()
        await new Promise<void>((resolve) => {
          server.close(() => resolve())
          server.closeIdleConnections()
          // @note Calls in flight end now, and are saved with a note.
          server.closeAllConnections()
        })
        await Promise.all(inFlight)
        await writing.catch(() => undefined)
        await file.sync().catch(() => undefined)
        await file.close()
      })()
      return closing
    },
  }
}
