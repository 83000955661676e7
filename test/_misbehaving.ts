// Loopback services that misbehave as live ones have, for verify and record (tests, bench).
import { createServer } from 'node:http'
import type { Writable } from 'node:stream'
import type { AddressInfo } from 'node:net'
import {
  constants,
  createBrotliCompress,
  createDeflate,
  gzipSync,
} from 'node:zlib'
import { onTestFinished } from 'vitest'

/** How a {@link startMisbehaving} service answers every request. */
export type Misbehaviour =
  | { kind: 'gzip-bomb'; decodedMb: number }
  | { kind: 'bomb'; encoding: 'deflate' | 'br'; decodedMb: number }
  | { kind: 'endless' }
  | { kind: 'large'; mb: number }
  | { kind: 'redirect-loop' }
  | { kind: 'redirect'; location: string; status?: number }
  | { kind: 'cut-short' }
  | { kind: 'silent' }
  | { kind: 'stalled-body' }
  | { kind: 'html' }
  | { kind: 'deep'; levels: number }
  | { kind: 'hyphens'; bytes: number }
  | { kind: 'reset' }
  | { kind: 'server-error' }
  | { kind: 'encoded'; encoding: string }

/** A service on loopback that misbehaves, and what it received. */
export interface MisbehavingService {
  url: string
  /** Requests received so far. */
  readonly requests: number
  close(): Promise<void>
}

const MB = 1024 * 1024
// @note One gzip member of 1 MB of JSON whitespace (about 1 KB compressed):
// members sent back to back inflate to one body, so a bomb of any size costs
// this service nothing to send.
const WHITESPACE_MEMBER = gzipSync(Buffer.alloc(MB, ' '), { level: 9 })

/** The customer an `encoded` service answers, before its encoding. */
export const ENCODED_CUSTOMER =
  '{"id":"cus_Encoded0000001","name":"Encoded","email":"encoded@example.com"}'

/** Writes `next()` chunks until it returns undefined or the client leaves. */
function pump(res: Writable, next: () => Buffer | undefined): void {
  const write = (): void => {
    for (;;) {
      if (res.destroyed) return
      const chunk = next()
      if (chunk === undefined) return void res.end()
      if (!res.write(chunk)) return void res.once('drain', write)
    }
  }
  res.on('error', () => undefined)
  write()
}

/**
 * Starts a service on loopback that answers every request the way `how`
 * says: a gzip, deflate or brotli bomb, an endless body, a large 201, a redirect loop, a
 * redirect elsewhere, an answer cut short, a body that stalls, no answer at all, a web server's
 * HTML page, a connection reset, a 500, or a body under a coding fetch
 * may not decode; closed when the test finishes.
 *
 * @example
 * const bomb = await startMisbehaving({ kind: 'gzip-bomb', decodedMb: 64 })
 * await verifyAgainst(bomb.url)
 * @see createMisbehaving, the same outside a test (the bench)
 */
export async function startMisbehaving(
  how: Misbehaviour,
): Promise<MisbehavingService> {
  const service = await createMisbehaving(how)
  onTestFinished(() => service.close())
  return service
}

/**
 * Starts a misbehaving service as {@link startMisbehaving} does, which the
 * caller closes.
 *
 * @example
 * const bomb = await createMisbehaving({ kind: 'gzip-bomb', decodedMb: 2048 })
 * try { await measure(bomb.url) } finally { await bomb.close() }
 */
export async function createMisbehaving(
  how: Misbehaviour,
): Promise<MisbehavingService> {
  let requests = 0
  const server = createServer((req, res) => {
    requests++
    req.resume()
    req.on('end', () => {
      switch (how.kind) {
        case 'gzip-bomb': {
          let left = how.decodedMb
          res.writeHead(201, {
            'content-type': 'application/json',
            'content-encoding': 'gzip',
          })
          return pump(res, () => (left-- > 0 ? WHITESPACE_MEMBER : undefined))
        }
        case 'bomb': {
          // @note One deflate or brotli stream, compressed as it is sent.
          res.writeHead(201, {
            'content-type': 'application/json',
            'content-encoding': how.encoding,
          })
          const zip =
            how.encoding === 'br'
              ? createBrotliCompress({
                  params: { [constants.BROTLI_PARAM_QUALITY]: 5 },
                })
              : createDeflate({ level: 9 })
          zip.pipe(res)
          res.on('close', () => zip.destroy())
          let left = how.decodedMb
          return pump(zip, () =>
            left-- > 0 ? Buffer.alloc(MB, ' ') : undefined,
          )
        }
        case 'endless':
          res.writeHead(201, { 'content-type': 'application/json' })
          return pump(res, () => Buffer.alloc(64 * 1024, ' '))
        case 'large': {
          res.writeHead(201, { 'content-type': 'application/json' })
          const pad = Buffer.alloc(MB, 'x')
          let left = how.mb
          let started = false
          return pump(res, () => {
            if (!started) {
              started = true
              return Buffer.from(
                `{"id":"cus_Large${String(requests).padStart(9, '0')}","name":"Large","email":"large@example.com","pad":"`,
              )
            }
            if (left-- > 0) return pad
            if (left === -1) return Buffer.from('"}')
            return undefined
          })
        }
        case 'redirect-loop':
          res.writeHead(302, { location: req.url ?? '/' })
          return void res.end()
        case 'redirect':
          res.writeHead(how.status ?? 307, { location: how.location })
          return void res.end()
        case 'cut-short':
          res.writeHead(201, {
            'content-type': 'application/json',
            'content-length': '1000',
          })
          res.write('{"id":')
          return void setTimeout(() => res.destroy(), 20)
        case 'stalled-body':
          // @note Headers and the start of a body, then nothing, for ever.
          res.writeHead(201, { 'content-type': 'application/json' })
          return void res.write('{"id":')
        case 'silent':
          // @note Never answers: close() drops the connection.
          return
        case 'deep':
          // Valid JSON, arrays in arrays: small on the wire, huge parsed.
          res.writeHead(201, { 'content-type': 'application/json' })
          return void res.end(
            `${'['.repeat(how.levels)}${']'.repeat(how.levels)}`,
          )
        case 'hyphens':
          // Every call refused, in words of `a-a-a-…`: each `a` begins a word.
          res.writeHead(422, { 'content-type': 'application/json' })
          return void res.end(
            JSON.stringify({
              code: 'validation_failed',
              detail: 'a-'.repeat(how.bytes / 2),
            }),
          )
        case 'html':
          res.writeHead(200, { 'content-type': 'text/html' })
          return void res.end('<html><body>Welcome to nginx!</body></html>')
        case 'reset':
          return void req.socket.destroy()
        case 'server-error':
          res.writeHead(500, { 'content-type': 'application/json' })
          return void res.end('{"error":"internal"}')
        case 'encoded':
          // @note gzip bytes under a coding a client may not know (`zstd`).
          res.writeHead(201, {
            'content-type': 'application/json',
            'content-encoding': how.encoding,
          })
          return void res.end(gzipSync(ENCODED_CUSTOMER))
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
