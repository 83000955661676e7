import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'

/** How a {@link startMisbehaving} service answers every request. */
export type Misbehaviour =
  | { kind: 'gzip-bomb'; decodedMb: number }
  | { kind: 'endless' }
  | { kind: 'large'; mb: number }
  | { kind: 'redirect-loop' }
  | { kind: 'redirect'; location: string; status?: number }
  | { kind: 'cut-short' }

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

/** Writes `next()` chunks until it returns undefined or the client leaves. */
function pump(res: ServerResponse, next: () => Buffer | undefined): void {
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
 * says: a gzip bomb, an endless body, a large 201, a redirect loop, a
 * redirect elsewhere, or an answer cut short.
 *
 * @example
 * const bomb = await startMisbehaving({ kind: 'gzip-bomb', decodedMb: 64 })
 * onTestFinished(() => bomb.close())
 */
export async function startMisbehaving(
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
