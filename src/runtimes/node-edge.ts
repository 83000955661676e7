// The server's edge on node:http: what a request shows on the wire and no web Request keeps.
import type { IncomingMessage } from 'node:http'
import { FastURL } from 'srvx/node'
import { SandboxError } from '../request/errors.ts'

const FIXED_HOST = 'sandbox.invalid'
const FIXED_BASE = `http://${FIXED_HOST}`

/**
 * Checks what only node:http's message shows (the request target as sent,
 * a second `Host`, a missing one, a second `Authorization`, `Idempotency-Key`,
 * `Content-Type` or `X-Sandbox-Scenario`, a transfer coding other than
 * chunked, the number of header fields), and gives
 * the URL of the `Request` to build: its path against a fixed base (or the
 * origin of the sandbox's `baseUrl`), never `Host`, which anyone can send.
 * The checks on the `Request` itself are the app's (`edge.ts`).
 *
 * @example
 * const url = checkWire(req, 100, undefined)
 * if (url instanceof SandboxError) return app.refuse(url, req.method, req.url)
 */
export function checkWire(
  req: IncomingMessage,
  maxHeadersCount: number,
  baseOrigin: string | undefined,
): URL | SandboxError {
  const target = req.url ?? ''
  if (!target.startsWith('/')) {
    return new SandboxError(
      'invalid_request',
      'The request target must be a path such as /v1/customers; this server is no proxy and takes no absolute URLs or "*".',
    )
  }
  if (countHeader(req.rawHeaders, 'host') > 1) {
    return new SandboxError(
      'invalid_host',
      'The request has more than one Host header; send exactly one.',
    )
  }
  if (
    req.headers.host === undefined &&
    req.httpVersionMajor === 1 &&
    req.httpVersionMinor >= 1
  ) {
    return new SandboxError(
      'invalid_host',
      'An HTTP/1.1 request needs a Host header (RFC 9112, section 3.2).',
    )
  }
  const repeated = repeatedHeader(req.rawHeaders)
  if (repeated !== undefined) {
    return new SandboxError(
      'invalid_request',
      `The request has ${repeated.count} ${repeated.name} headers; send one. Joined with a comma, they would read as one value that nobody sent.`,
    )
  }
  const codings = req.headers['transfer-encoding']
  if (codings !== undefined && !/^\s*chunked\s*$/i.test(codings)) {
    // @note node:http takes any codings that end in chunked and hands on the
    // body still coded (`gzip, chunked`): it would be read as plain.
    return new SandboxError(
      'unsupported_media_type',
      `The body is sent with Transfer-Encoding: ${JSON.stringify(codings.slice(0, 100))}; the sandbox decodes no transfer coding but chunked. Send it uncoded, framed by Content-Length or by Transfer-Encoding: chunked alone.`,
      { headers: { 'accept-encoding': 'identity' } },
    )
  }
  let url = toUrl(target)
  if (url === undefined) {
    // @note Only a target naming __sandbox can normalise to the admin
    // surface: an invalid one is refused there, served elsewhere.
    if (target.includes('__sandbox')) {
      return new SandboxError(
        'invalid_request',
        'The request target is not a valid path.',
      )
    }
    url = new URL(`${FIXED_BASE}/`)
  }
  // node:http keeps one header more than the limit, so that more shows.
  if (req.rawHeaders.length / 2 > maxHeadersCount) {
    return new SandboxError(
      'headers_too_large',
      `The request has more than ${maxHeadersCount} header fields, the limit of the maxHeadersCount option (--max-headers-count).`,
    )
  }
  // With a baseUrl, its path prefix applies on the server's own origin.
  return baseOrigin === undefined
    ? url
    : new URL(url.pathname + url.search, baseOrigin)
}

/**
 * The URL of a request target (a path) against the fixed base, or undefined.
 * srvx's `FastURL` parses only a path that needs normalising (dot segments,
 * percent-encoded dots, characters a URL escapes); any other is taken as it
 * is, as the WHATWG parser would leave it.
 */
function toUrl(target: string): URL | undefined {
  const query = target.indexOf('?')
  try {
    return new FastURL({
      protocol: 'http:',
      host: FIXED_HOST,
      pathname: query === -1 ? target : target.slice(0, query),
      // A lone `?` is no query, as the WHATWG parser reads it.
      search:
        query === -1 || query === target.length - 1 ? '' : target.slice(query),
    })
  } catch {
    return undefined
  }
}

/**
 * Headers the sandbox reads as one value, by their lower-case names: sent
 * twice, node:http (as a web `Headers`) joins them with a comma into a
 * value that nobody sent.
 */
const SINGLE_HEADERS = new Map([
  ['authorization', 'Authorization'],
  ['idempotency-key', 'Idempotency-Key'],
  ['content-type', 'Content-Type'],
  ['x-sandbox-scenario', 'X-Sandbox-Scenario'],
])

/** The first of `SINGLE_HEADERS` that `raw` holds more than once, and how often. */
function repeatedHeader(
  raw: string[],
): { name: string; count: number } | undefined {
  let counts: Map<string, number> | undefined
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase()
    if (!SINGLE_HEADERS.has(name)) continue
    counts ??= new Map()
    counts.set(name, (counts.get(name) ?? 0) + 1)
  }
  for (const [name, count] of counts ?? []) {
    if (count > 1) return { name: SINGLE_HEADERS.get(name)!, count }
  }
  return undefined
}

function countHeader(raw: string[], name: string): number {
  let count = 0
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name)
      count++
  }
  return count
}
