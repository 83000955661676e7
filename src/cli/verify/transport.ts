// verify's requests to a live service: paced, counted, bounded, redirects kept to the target.
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { maskSecret } from '../../model/secrets.ts'
import {
  BodyTooLarge,
  DEFAULT_MAX_BODY,
  explainNetworkError,
  isDecoded,
  readBounded,
  readJson,
} from '../bounded-body.ts'

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
  /** Why a body that may be JSON was not read as JSON (`readJson`). */
  unread?: string
}

/** A request the budget, the user or the network stopped: the row becomes `unknown`. */
export class ProbeStopped extends Error {
  /** What ended it; `network` covers any misbehaving answer (size, redirect). */
  readonly kind: 'budget' | 'aborted' | 'network'
  constructor(message: string, kind: 'budget' | 'aborted' | 'network') {
    super(message)
    this.kind = kind
  }
}

/**
 * Enough for a service whose every configurable assumption differs from the
 * sandbox's defaults (29 records in `test/regressions/29-*`), with room.
 */
export const DEFAULT_MAX_CREATES = 40

/** Same-origin hops followed for one probe before it is given up. */
const MAX_REDIRECTS = 5

/** Whether `url` is one of the two operations under `base`, where a hop may go. */
const isOperationUrl = (url: URL, base: string): boolean =>
  url.search === '' &&
  OPERATION_PATHS.some((path) => url.href === new URL(`${base}${path}`).href)

/** Settings of the request budget and pacing. */
export interface ProberOptions {
  /** The service's base URL, e.g. `https://staging.acme.test/api`. */
  target: string
  /** The API key probes authenticate with. */
  key: string
  /** @default 200 */
  maxRequests?: number
  /** @default 40 */
  maxCreates?: number
  /** Requests per second at most. @default 5 */
  rate?: number
  /** Per-request timeout in milliseconds. @default 10000 */
  timeoutMs?: number
  /** The most bytes of one answer's decoded body that are read. @default 8 MB */
  maxBody?: number
  /** Aborts the run: requests in flight end and later ones are refused. */
  signal?: AbortSignal
  /** Answers requests instead of the network (dry runs and offline checks). */
  send?: (request: Request, probe: ProbeRequest) => Promise<Response>
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
  /** The host every request went to, and so every record was created on. */
  readonly host: string
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
  const maxCreates = options.maxCreates ?? DEFAULT_MAX_CREATES
  const interval = 1000 / (options.rate ?? 5)
  const timeoutMs = options.timeoutMs ?? 10_000
  const maxBody = options.maxBody ?? DEFAULT_MAX_BODY
  const origin = new URL(base).origin
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

  /**
   * One request and its bounded answer; a redirect's body is not read, only
   * its `Location`.
   */
  async function transmit(
    url: string,
    probe: ProbeRequest,
    headers: Record<string, string>,
    body: string,
  ): Promise<{ response: Response; bytes: Buffer; location?: string }> {
    const timeout = AbortSignal.timeout(timeoutMs)
    const signal = options.signal
      ? AbortSignal.any([options.signal, timeout])
      : timeout
    const request = new Request(url, {
      method: 'POST',
      headers,
      body,
      signal,
      redirect: 'manual',
    })
    let answered = false
    try {
      const response =
        probe.headerCount !== undefined && !options.send
          ? await sendExactHeaders(request, body, probe.headerCount, maxBody)
          : options.send
            ? await options.send(request, probe)
            : await fetch(request)
      answered = true
      const location = response.headers.get('location')
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel().catch(() => undefined)
        return { response, bytes: Buffer.alloc(0), location }
      }
      const encoding = response.headers.get('content-encoding')
      if (!isDecoded(encoding)) {
        await response.body?.cancel().catch(() => undefined)
        throw new ProbeStopped(
          `the service answered ${response.status} encoded as ${encoding}, which verify cannot decode (it asks for gzip, deflate or br), to "${probe.purpose}"`,
          'network',
        )
      }
      return { response, bytes: await readBounded(response, maxBody) }
    } catch (error) {
      if (error instanceof ProbeStopped) throw error
      if (options.signal?.aborted)
        throw new ProbeStopped('stopped (interrupted)', 'aborted')
      if (error instanceof BodyTooLarge)
        throw new ProbeStopped(
          `${error.message} (to "${probe.purpose}")`,
          'network',
        )
      if (timeout.aborted)
        throw new ProbeStopped(
          answered
            ? `the service answered but did not finish its body within ${timeoutMs} ms`
            : `the service did not answer within ${timeoutMs} ms`,
          'network',
        )
      throw new ProbeStopped(
        `the request failed: ${explainNetworkError(error)}`,
        'network',
      )
    }
  }

  return {
    log,
    tag,
    host: new URL(base).host,
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
      const first = `${base}${probe.path}`
      log.push({
        method: 'POST',
        url: first,
        headers: Object.fromEntries(
          Object.entries(headers).map(([k, v]) => [k, redact(v)]),
        ),
        body: body.length > 200 ? `<${body.length} bytes>` : redact(body),
        purpose: probe.purpose,
      })
      if (probe.creates) creates++
      let response: Response | undefined
      let bytes: Buffer | undefined
      try {
        // @note Redirects are followed here, one counted and paced request per
        // hop, and only to the two operations on the target's own origin.
        for (let hop = 0, url = first; ; hop++) {
          if (hop > 0 && requests >= maxRequests)
            throw new ProbeStopped(
              `not probed: --max-requests (${maxRequests}) reached while following the service's redirects`,
              'budget',
            )
          await wait(nextAt - performance.now())
          nextAt = performance.now() + interval
          requests++
          try {
            const sent = await transmit(url, probe, headers, body)
            if (sent.location === undefined) {
              response = sent.response
              bytes = sent.bytes
              break
            }
            const next = new URL(sent.location, url)
            const shownUrl = redact(next.href)
            const status = sent.response.status
            if (next.origin !== origin)
              throw new ProbeStopped(
                `the service redirected POST ${probe.path} (${status}) to another origin, ${shownUrl}: not followed`,
                'network',
              )
            if (!isOperationUrl(next, base))
              throw new ProbeStopped(
                `the service redirected POST ${probe.path} (${status}) to ${shownUrl}, which is not one of the two operations: not followed`,
                'network',
              )
            if (hop >= MAX_REDIRECTS)
              throw new ProbeStopped(
                `the service redirected POST ${probe.path} ${MAX_REDIRECTS + 1} times in a row (last to ${shownUrl}): not followed further`,
                'network',
              )
            url = next.href
          } finally {
            options.onRequest?.(requests, probe)
          }
        }
      } catch (error) {
        if (probe.creates) creates--
        throw error
      }
      const text = bytes.toString('utf8')
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
      const { json, unread } = readJson(text)
      return {
        status: response.status,
        headers: responseHeaders,
        text,
        json,
        ...(unread && { unread }),
      }
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
  maxBody: number,
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
        let size = 0
        res.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size <= maxBody) chunks.push(chunk)
          else {
            res.destroy()
            reject(new BodyTooLarge(maxBody, false))
          }
        })
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
