import { connect } from 'node:net'
import { request } from 'node:http'

/** An answer as read off the socket. */
export interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: string
  /** Whether the server closed the connection after the answer. */
  closed: boolean
}

/**
 * Sends `text` as it is over a fresh TCP connection and reads one answer:
 * for headers that fetch and node:http would fix or refuse (`Host`, none).
 *
 * @example
 * await rawExchange(port, 'GET / HTTP/1.1\r\nHost: foo.123\r\n\r\n')
 */
export function rawExchange(
  port: number,
  text: string,
  timeoutMs = 5000,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let data = ''
    let answer: RawAnswer | undefined
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`No answer within ${timeoutMs} ms; got: ${data}`))
    }, timeoutMs)
    const finish = (closed: boolean): void => {
      const parsed = parse(data)
      if (!parsed) return
      clearTimeout(timer)
      answer = { ...parsed, closed }
      socket.destroy()
      resolve(answer)
    }
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      data += chunk
      const parsed = parse(data)
      // Wait a moment for the close that follows a `Connection: close` answer.
      if (parsed && parsed.headers.connection !== 'close') finish(false)
    })
    socket.on('end', () => finish(true))
    socket.on('close', () => finish(true))
    socket.on('error', () => finish(true))
    socket.write(text, 'latin1')
  })
}

function parse(
  data: string,
):
  | { status: number; headers: Record<string, string>; body: string }
  | undefined {
  const end = data.indexOf('\r\n\r\n')
  if (end === -1) return undefined
  const [line, ...fields] = data.slice(0, end).split('\r\n')
  const headers: Record<string, string> = {}
  for (const field of fields) {
    const colon = field.indexOf(':')
    headers[field.slice(0, colon).toLowerCase()] = field.slice(colon + 1).trim()
  }
  let body = data.slice(end + 4)
  if (headers['transfer-encoding'] === 'chunked') {
    let decoded = ''
    let at = 0
    for (;;) {
      const eol = body.indexOf('\r\n', at)
      if (eol === -1) return undefined
      const size = Number.parseInt(body.slice(at, eol), 16)
      if (size === 0) break
      if (body.length < eol + 2 + size) return undefined
      decoded += body.slice(eol + 2, eol + 2 + size)
      at = eol + 2 + size + 2
    }
    body = decoded
  } else {
    const length = Number(headers['content-length'] ?? 0)
    if (Buffer.byteLength(body, 'latin1') < length) return undefined
  }
  return { status: Number(line!.split(' ')[1]), headers, body }
}

/**
 * One request with node:http, its headers sent exactly as given (no `Host`
 * added), answered as text.
 *
 * @example
 * await httpExchange(port, 'GET', '/__sandbox/health', { host: 'a.1' })
 */
export function httpExchange(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        port,
        host: '127.0.0.1',
        method,
        path,
        // A body is framed by its length whatever the method.
        headers:
          body === undefined
            ? headers
            : { 'content-length': String(Buffer.byteLength(body)), ...headers },
        setHost: false,
        agent: false,
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (text += chunk))
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            body: text,
          }),
        )
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}
