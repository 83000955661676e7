import type { IncomingMessage, ServerResponse } from 'node:http'
import { FastResponse, sendNodeResponse } from 'srvx/node'
import type { RequestLike } from './context.ts'
import { SandboxError } from './errors.ts'

// Headers node:http keeps one value of (the first) where the Fetch standard
// joins them all; `get` answers as a web `Request` would when they repeat.
const FIRST_ONLY = new Set(['authorization', 'content-length', 'content-type'])

/**
 * A node:http request as the operations read it (`RequestLike`): its headers
 * straight from node's parsed object, its body read in one go, and a web
 * stream only if something asks for one. The server answers the operations'
 * paths with it instead of a full `Request`.
 *
 * @example
 * const answer = await router.operation('POST', '/v1/customers')!(new IncomingCall(req))
 */
export class IncomingCall implements RequestLike {
  readonly method: string
  readonly headers: RequestLike['headers']
  readonly #req: IncomingMessage
  #read = false
  #stream: ReadableStream<Uint8Array> | undefined

  constructor(req: IncomingMessage) {
    this.#req = req
    this.method = req.method ?? 'GET'
    const parsed = req.headers
    this.headers = {
      get(name) {
        // Own properties only: `constructor` is no header.
        const value = Object.hasOwn(parsed, name) ? parsed[name] : undefined
        if (value === undefined) return null
        if (typeof value !== 'string') return value.join(', ')
        return FIRST_ONLY.has(name)
          ? allValues(req.rawHeaders, name, value)
          : value
      },
      has: (name) => Object.hasOwn(parsed, name),
    }
  }

  get body(): ReadableStream<Uint8Array> | null {
    if (this.method === 'GET' || this.method === 'HEAD') return null
    if (this.#stream) return this.#stream
    this.#take()
    const req = this.#req
    let onData: (chunk: Buffer) => void
    // @note Not Readable.toWeb: its cancel destroys the request and with it
    // the socket, so a 413 for an oversized body could not be sent. Here a
    // cancel stops reading; node:http then closes the connection after the
    // answer (which says `Connection: close`).
    return (this.#stream = new ReadableStream<Uint8Array>({
      start(controller) {
        onData = (chunk) => {
          controller.enqueue(new Uint8Array(chunk))
          if ((controller.desiredSize ?? 0) <= 0) req.pause()
        }
        req.on('data', onData)
        req.once('end', () => controller.close())
        whenCut(req, () => controller.error(cutShort()))
      },
      pull() {
        req.resume()
      },
      cancel() {
        req.off('data', onData)
        req.pause()
      },
    }))
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.#bytes()
    return bytes.buffer.slice(
      bytes.byteOffset,
      bytes.byteOffset + bytes.byteLength,
    ) as ArrayBuffer
  }

  #take(): void {
    if (this.#read)
      throw new TypeError('Body is unusable: it was read already.')
    this.#read = true
  }

  #bytes(): Promise<Buffer> {
    this.#take()
    const req = this.#req
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.once('end', () =>
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)),
      )
      whenCut(req, () => reject(cutShort()))
    })
  }
}

/**
 * Calls `cut` once if the client goes away before the whole body has come:
 * now, when it left while the pipeline waited (a slow persona, a delay), or
 * later. Node emits no more events for a request that is already destroyed.
 */
function whenCut(req: IncomingMessage, cut: () => void): void {
  if (req.destroyed && !req.readableEnded) {
    cut()
    return
  }
  req.once('error', cut)
  req.once('close', () => {
    if (!req.readableEnded) cut()
  })
}

// A client that stops sending gets an answer it will never read; the journal
// still says what happened, not that the sandbox failed.
const cutShort = (): SandboxError =>
  new SandboxError(
    'invalid_json',
    'The request body ended early: the client stopped sending it.',
  )

/** The value of a header node:http keeps once, joined as `Headers` would if it repeats. */
function allValues(raw: string[], name: string, first: string): string {
  let values: string[] | undefined
  let seen = 0
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i]!
    if (key.length !== name.length || key.toLowerCase() !== name) continue
    if (++seen === 2) values = [first]
    if (seen >= 2) values!.push(raw[i + 1]!.trim())
  }
  return values === undefined ? first : values.join(', ')
}

/**
 * The server's Response class: srvx's lazy `FastResponse`, which also keeps
 * its string body and header pairs so that `sendResponse` can write them to
 * node:http as they are, as long as nothing has asked for `headers`.
 */
export class DirectResponse extends FastResponse {
  readonly #body: string
  readonly #init: ResponseInit
  #touched = false

  constructor(body: string, init: ResponseInit) {
    super(body, init)
    this.#body = body
    this.#init = init
  }

  override get headers(): Headers {
    this.#touched = true
    return super.headers
  }

  /** The status line, headers and body, while they are still the ones it was built with. */
  untouched():
    | { status: number; statusText: string; headers: string[]; body: string }
    | undefined {
    const pairs = this.#init.headers
    if (this.#touched || !Array.isArray(pairs)) return undefined
    const headers: string[] = []
    for (const [name, value] of pairs as [string, string][]) {
      headers.push(name, value)
    }
    headers.push('content-length', String(Buffer.byteLength(this.#body)))
    return {
      status: this.#init.status ?? 200,
      statusText: this.#init.statusText ?? '',
      headers,
      body: this.#body,
    }
  }
}

/**
 * Writes a Response to node:http: a `DirectResponse` with one `writeHead` and
 * one `end` (a single write to the socket), anything else through srvx.
 *
 * @example
 * await sendResponse(res, await resolve(new IncomingCall(req)))
 */
export function sendResponse(
  res: ServerResponse,
  response: Response,
): Promise<void> | void {
  const direct =
    response instanceof DirectResponse ? response.untouched() : undefined
  if (direct === undefined) return sendNodeResponse(res, response)
  res.writeHead(direct.status, direct.statusText, direct.headers)
  res.end(direct.body)
}
