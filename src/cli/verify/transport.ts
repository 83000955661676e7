import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { maskSecret } from '../../model/secrets.ts'

/** The only two operations `verify` ever calls. */
export const OPERATION_PATHS = ['/v1/customers', '/v2/tokens'] as const
export type OperationPath = (typeof OPERATION_PATHS)[number]

/** One request a probe sends. */
export interface ProbeRequest {
  path: OperationPath
  /** Header names in lower case; `authorization` is set from the key unless given. */
  headers?: Record<string, string>
  /** A string is sent as is; anything else as JSON. */
  body?: unknown
  /** Set when a success would create a record: it counts towards `--max-creates`. */
  creates?: boolean
  /** What the request checks, for `--dry-run` and the progress line. */
  purpose: string
  /**
   * Sends exactly this many header fields (padded with `x-verify-pad-N`),
   * through node:http, since fetch adds fields of its own.
   */
  headerCount?: number
}

/** What came back, with lower-case header names. */
export interface ProbeResponse {
  status: number
  headers: Record<string, string>
  text: string
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown
}

/** A request the budget, the user or the network stopped: the row becomes `unknown`. */
export class ProbeStopped extends Error {
  /** `budget`, `aborted` or `network`: what ended it. */
  readonly kind: 'budget' | 'aborted' | 'network'
  constructor(message: string, kind: 'budget' | 'aborted' | 'network') {
    super(message)
    this.kind = kind
  }
}

/** Settings of the request budget and pacing. */
export interface ProberOptions {
  /** The service's base URL, e.g. `https://staging.acme.test/api`. */
  target: string
  /** The API key probes authenticate with. */
  key: string
  /** @default 200 */
  maxRequests?: number
  /** @default 20 */
  maxCreates?: number
  /** Requests per second at most. @default 5 */
  rate?: number
  /** Per-request timeout in milliseconds. @default 10000 */
  timeoutMs?: number
  /** Aborts the run: requests in flight end and later ones are refused. */
  signal?: AbortSignal
  /** Answers requests instead of the network (dry runs and offline checks). */
  send?: (request: Request) => Promise<Response>
  /** Called after each request, for a progress bar. */
  onRequest?: (sent: number, request: ProbeRequest) => void
}

/** A request as listed by `--dry-run`. */
export interface PlannedRequest {
  method: 'POST'
  url: string
  headers: Record<string, string>
  body: string
  purpose: string
}

/** Sends probe requests within the budget, pacing them and masking secrets. */
export interface Prober {
  send(request: ProbeRequest): Promise<ProbeResponse>
  /** Remembers a secret (a minted token) so that no output shows it in full. */
  addSecret(secret: string): void
  /** Replaces every known secret in `text` by its masked form. */
  redact(text: string): string
  /** Every request sent so far, secrets masked. */
  readonly log: PlannedRequest[]
  readonly requests: number
  readonly creates: number
  /** A tag unique to this run, carried by the name of every created customer. */
  readonly tag: string
}

/**
 * Creates the one way probes reach the service: only `POST` on the two
 * operations, at most `maxRequests` requests and `maxCreates` records, paced
 * to `rate` per second, each bounded by `timeoutMs`.
 *
 * @example
 * const prober = createProber({ target: 'https://staging.acme.test', key })
 * const answer = await prober.send({ path: '/v1/customers', body: { name, email }, creates: true, purpose: 'success' })
 */
export function createProber(options: ProberOptions): Prober {
  const base = options.target.replace(/\/+$/, '')
  const maxRequests = options.maxRequests ?? 200
  const maxCreates = options.maxCreates ?? 20
  const interval = 1000 / (options.rate ?? 5)
  const timeoutMs = options.timeoutMs ?? 10_000
  const secrets = new Set<string>([options.key])
  const log: PlannedRequest[] = []
  let requests = 0
  let creates = 0
  let nextAt = 0
  const tag = `ctsv${Math.random().toString(36).slice(2, 8).padEnd(6, '0')}`

  const redact = (text: string): string => {
    let out = text
    for (const secret of secrets)
      if (secret.length >= 8) out = out.split(secret).join(maskSecret(secret))
    return out
  }

  const wait = (ms: number): Promise<void> =>
    new Promise((resolve, reject) => {
      if (ms <= 0) return resolve()
      const timer = setTimeout(done, ms)
      function done(): void {
        options.signal?.removeEventListener('abort', stop)
        resolve()
      }
      function stop(): void {
        clearTimeout(timer)
        reject(new ProbeStopped('stopped (interrupted)', 'aborted'))
      }
      options.signal?.addEventListener('abort', stop, { once: true })
    })

  return {
    log,
    tag,
    get requests() {
      return requests
    },
    get creates() {
      return creates
    },
    addSecret(secret) {
      secrets.add(secret)
    },
    redact,
    async send(probe) {
      if (!(OPERATION_PATHS as readonly string[]).includes(probe.path)) {
        // @note A programming error, never a user's: verify calls nothing else.
        throw new Error(`verify only calls ${OPERATION_PATHS.join(' and ')}`)
      }
      if (options.signal?.aborted)
        throw new ProbeStopped('stopped (interrupted)', 'aborted')
      if (requests >= maxRequests)
        throw new ProbeStopped(
          `not probed: --max-requests (${maxRequests}) reached`,
          'budget',
        )
      if (probe.creates && creates >= maxCreates)
        throw new ProbeStopped(
          `not probed: --max-creates (${maxCreates}) reached`,
          'budget',
        )
      const headers: Record<string, string> = {
        authorization: `Bearer ${options.key}`,
        'content-type': 'application/json',
        ...probe.headers,
      }
      for (const [name, value] of Object.entries(headers))
        if (value === '') delete headers[name]
      const body =
        typeof probe.body === 'string'
          ? probe.body
          : JSON.stringify(probe.body ?? {})
      const url = `${base}${probe.path}`
      log.push({
        method: 'POST',
        url,
        headers: Object.fromEntries(
          Object.entries(headers).map(([k, v]) => [k, redact(v)]),
        ),
        body: body.length > 200 ? `<${body.length} bytes>` : redact(body),
        purpose: probe.purpose,
      })
      await wait(nextAt - performance.now())
      nextAt = performance.now() + interval
      requests++
      if (probe.creates) creates++
      const timeout = AbortSignal.timeout(timeoutMs)
      const signal = options.signal
        ? AbortSignal.any([options.signal, timeout])
        : timeout
      const request = new Request(url, {
        method: 'POST',
        headers,
        body,
        signal,
      })
      let response: Response
      let text: string
      try {
        response =
          probe.headerCount !== undefined && !options.send
            ? await sendExactHeaders(request, body, probe.headerCount)
            : await (options.send ?? fetch)(request)
        text = await response.text()
      } catch (error) {
        if (options.signal?.aborted)
          throw new ProbeStopped('stopped (interrupted)', 'aborted')
        if (timeout.aborted)
          throw new ProbeStopped(
            `the service did not answer within ${timeoutMs} ms`,
            'network',
          )
        const cause = (error as { cause?: { code?: string; message?: string } })
          .cause
        throw new ProbeStopped(
          `the request failed: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
          'network',
        )
      } finally {
        options.onRequest?.(requests, probe)
      }
      // Nothing was created unless the service said so.
      if (
        probe.creates &&
        (!(response.status >= 200 && response.status < 300) ||
          response.headers.get('idempotent-replayed') === 'true')
      )
        creates--
      const responseHeaders: Record<string, string> = {}
      response.headers.forEach((value, name) => {
        responseHeaders[name] = value
      })
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch {
        json = undefined
      }
      return { status: response.status, headers: responseHeaders, text, json }
    },
  }
}

/**
 * Sends `request` with exactly `count` header fields: node:http adds none when
 * Host, Connection and Content-Length are given.
 */
function sendExactHeaders(
  request: Request,
  body: string,
  count: number,
): Promise<Response> {
  const url = new URL(request.url)
  const headers: Record<string, string> = {
    host: url.host,
    connection: 'close',
    'content-length': String(Buffer.byteLength(body)),
  }
  request.headers.forEach((value, name) => {
    headers[name] = value
  })
  for (let i = 1; Object.keys(headers).length < count; i++)
    headers[`x-verify-pad-${i}`] = '1'
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const req = send(
      url,
      { method: 'POST', headers, signal: request.signal },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('error', reject)
        res.on('end', () => {
          const out = new Headers()
          for (const [name, value] of Object.entries(res.headers))
            if (value !== undefined)
              out.set(name, Array.isArray(value) ? value.join(', ') : value)
          resolve(
            new Response(Buffer.concat(chunks), {
              status: res.statusCode ?? 500,
              headers: out,
            }),
          )
        })
      },
    )
    req.on('error', (error) =>
      reject(Object.assign(new TypeError('fetch failed'), { cause: error })),
    )
    req.end(body)
  })
}
