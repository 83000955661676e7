import { connect } from 'node:net'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { customerNames, startServer } from '../_servers.ts'

// Found by an outside tester. A client that half-closed its connection in
// the middle of a body got `400 invalid_request` (HPE_INVALID_EOF_STATE,
// with no hint) under one request id, while the journal and the request log
// recorded another request id, `400 invalid_json`, an answer never sent: the
// parser's refusal went out raw, and the sandbox's own answer to the request
// was dropped. A bad chunk size did the same. The answer sent is now the
// sandbox's, and the journal's: a body cut short, or the parser's words.

/** Sends `head` and `body`, half-closes, and reads the whole answer. */
function halfClose(port: number, head: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let data = ''
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`No close within 5 s; got: ${data}`))
    }, 5000)
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => (data += chunk))
    socket.on('close', () => {
      clearTimeout(timer)
      resolve(data)
    })
    socket.on('error', () => {})
    socket.write(head + body, 'latin1')
    // The sandbox is reading the body when the client stops sending.
    setTimeout(() => socket.end(), 200)
  })
}

const HEAD = (framing: string): string =>
  [
    'POST /v1/customers HTTP/1.1',
    'Host: 127.0.0.1',
    `Authorization: Bearer ${DEMO_KEY_ONE}`,
    'Content-Type: application/json',
    framing,
    '',
    '',
  ].join('\r\n')

it.each([
  [
    'a body shorter than its Content-Length',
    HEAD('Content-Length: 100'),
    '{"name":"Aborted","email":"ab@example.com"}',
    'invalid_json',
    /The request body ended early/,
  ],
  [
    'a chunk whose size is no number',
    HEAD('Transfer-Encoding: chunked'),
    '2b\r\n{"name":"Aborted","email":"ab@example.com"}\r\nzz\r\n',
    'invalid_request',
    /hexadecimal size/,
  ],
])(
  'answers %s with the one answer the journal records, and stores nothing',
  async (_, head, body, code, detail) => {
    const server = await startServer({ seed: 1 })
    const before = await customerNames(server.url)
    const port = Number(new URL(server.url).port)
    const answer = await halfClose(port, head, body)
    const [status] = /^HTTP\/1\.1 (\d+)/.exec(answer)?.slice(1) ?? []
    const requestId = /\r\nx-request-id: (\S+)\r\n/i.exec(answer)?.[1]
    const problem = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))
    expect(status).toBe('400')
    expect(problem.code).toBe(code)
    expect(problem.detail).toMatch(detail)
    expect(requestId).toMatch(/^req_/)

    const journal = (await (
      await fetch(`${server.url}/__sandbox/requests?limit=1`)
    ).json()) as { requests: Record<string, unknown>[] }
    expect(journal.requests[0]).toMatchObject({
      request_id: requestId,
      status: 400,
      code,
    })
    expect(await customerNames(server.url)).toEqual(before)
  },
)
