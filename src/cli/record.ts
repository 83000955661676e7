import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { rename, writeFile } from 'node:fs/promises'
import { createSandboxCore } from '../sandbox-core.ts'
import { maskSecret } from '../model/secrets.ts'
import { sandboxOptionsOf } from './verify/config.ts'

/** One call that went through the recorder, secrets masked. */
export interface RecordedExchange {
  at: string
  duration_ms: number
  request: {
    method: string
    path: string
    headers: Record<string, string>
    body: string
  }
  response: {
    status: number
    headers: Record<string, string>
    body: string
  }
}

/** Options of `startRecorder()`. */
export interface RecorderOptions {
  /** The live service's base URL. */
  target: string
  /** The session file, rewritten after every exchange. */
  file: string
  /** @default 0 (a free port) */
  port?: number
  /** @default '127.0.0.1' */
  host?: string
  /** Sandbox options (and server options, ignored here) the session starts from. */
  config?: Record<string, unknown>
  /** Time to wait for the service's answer, in milliseconds. @default 30000 */
  timeoutMs?: number
  /** Called after each exchange is saved. */
  onExchange?: (exchange: RecordedExchange) => void
  /** Called when the session file cannot be written. */
  onError?: (error: Error) => void
}

/** A running recorder. */
export interface Recorder {
  url: string
  file: string
  readonly exchanges: readonly RecordedExchange[]
  /** Stops listening once the last exchange is saved. */
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

/** A response body with the token secret (and anything else named `token`) masked. */
function maskBody(text: string, secrets: Set<string>): string {
  let out = text
  try {
    const json = JSON.parse(text) as Record<string, unknown>
    if (json && typeof json === 'object' && typeof json.token === 'string') {
      secrets.add(json.token)
      out = JSON.stringify({ ...json, token: maskSecret(json.token) })
    }
  } catch {
    // Not JSON: only the known secrets are masked below.
  }
  for (const secret of secrets)
    if (secret.length >= 8) out = out.split(secret).join(maskSecret(secret))
  return out
}

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY) {
        reject(
          new RangeError(
            `request bodies above ${MAX_BODY} bytes are not recorded`,
          ),
        )
        req.destroy()
      } else chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })

/**
 * Starts a pass-through proxy to `target` that saves every exchange, secrets
 * masked, into `file` as a session: what `createSandbox({ from })` and the
 * CLI's `--from` load, with the exchanges under `recorded` for
 * `verify --from` to compare offline.
 *
 * @example
 * const recorder = await startRecorder({ target: 'https://staging.acme.test', file: 'session.json' })
 * // point the client at recorder.url, then:
 * await recorder.close()
 */
export async function startRecorder(
  options: RecorderOptions,
): Promise<Recorder> {
  const base = options.target.replace(/\/+$/, '')
  const exchanges: RecordedExchange[] = []
  const secrets = new Set<string>()
  const sandboxOptions = sandboxOptionsOf(options.config ?? {})
  // Validates the options now, not at the first save.
  createSandboxCore(sandboxOptions)
  let saving: Promise<void> = Promise.resolve()
  const save = (): Promise<void> => {
    saving = saving
      .catch(() => undefined)
      .then(async () => {
        const { sandbox } = createSandboxCore(sandboxOptions)
        await sandbox.ready
        const session = sandbox.export()
        const owner = session.data.accounts[0]?.id
        const known = new Set(session.data.customers.map((c) => c.id))
        // The customers the service created, so that --from starts with them.
        for (const exchange of exchanges) {
          if (
            owner === undefined ||
            exchange.request.path.replace(/\?.*$/, '') !== '/v1/customers' ||
            exchange.response.status < 200 ||
            exchange.response.status > 299
          )
            continue
          try {
            const body = JSON.parse(exchange.response.body) as Record<
              string,
              unknown
            >
            if (typeof body.id === 'string' && !known.has(body.id)) {
              known.add(body.id)
              session.data.customers.push({
                id: body.id,
                account_id: owner,
                ...(typeof body.name === 'string' && { name: body.name }),
                ...(typeof body.email === 'string' && { email: body.email }),
                created_at: exchange.at,
              })
            }
          } catch {
            // An answer that is not JSON holds no customer.
          }
        }
        const document = {
          ...session,
          recorded: { target: base, exchanges },
        }
        const temporary = `${options.file}.${process.pid}.tmp`
        await writeFile(temporary, `${JSON.stringify(document, null, 2)}\n`)
        await rename(temporary, options.file)
      })
    return saving
  }

  const server = createServer(async (req, res) => {
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
    try {
      body = await readBody(req)
      const answer = await fetch(`${base}${path}`, {
        method: req.method ?? 'GET',
        headers,
        ...(body.length > 0 && { body: new Uint8Array(body) }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
        redirect: 'manual',
      })
      status = answer.status
      answer.headers.forEach((value, name) => {
        if (!HOP_BY_HOP.has(name)) responseHeaders[name] = value
      })
      responseBody = Buffer.from(await answer.arrayBuffer())
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code
      const reason =
        (error as Error).name === 'TimeoutError'
          ? 'the service did not answer in time'
          : `the service could not be reached (${cause ?? (error as Error).message})`
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
    }
    res.writeHead(status, responseHeaders)
    res.end(responseBody)
    const maskedHeaders = { ...headers }
    if (maskedHeaders.authorization !== undefined)
      maskedHeaders.authorization = maskAuthorization(
        maskedHeaders.authorization,
      )
    const exchange: RecordedExchange = {
      at,
      duration_ms: Math.round(performance.now() - started),
      request: {
        method: req.method ?? 'GET',
        path,
        headers: maskedHeaders,
        body: maskBody(body.toString('utf8'), secrets),
      },
      response: {
        status,
        headers: responseHeaders,
        body: maskBody(responseBody.toString('utf8'), secrets),
      },
    }
    exchanges.push(exchange)
    await save().catch((error: Error) => options.onError?.(error))
    options.onExchange?.(exchange)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve)
  })
  const { port } = server.address() as AddressInfo
  const host = options.host ?? '127.0.0.1'
  await save()
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    file: options.file,
    exchanges,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
      await saving.catch(() => undefined)
    },
  }
}
