import { createServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { expect, it, onTestFinished } from 'vitest'
import { verifyAgainst } from '../_servers.ts'

// A service whose answers break HTTP was reported as "the network failed
// (HPE_UNEXPECTED_CONTENT_LENGTH)" or "(UND_ERR_HEADERS_OVERFLOW)": a
// sentence that blames the network for what the service sent.

/** A raw TCP service that answers each request with `answer(socket)`. */
async function rawService(answer: (socket: Socket) => void): Promise<string> {
  const server = createServer((socket) => {
    socket.on('error', () => undefined)
    let head = ''
    socket.on('data', (chunk) => {
      head += chunk.toString('latin1')
      if (head.includes('\r\n\r\n')) {
        head = ''
        answer(socket)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  onTestFinished(
    () => new Promise<void>((resolve) => server.close(() => resolve())),
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

it('says an answer with both Content-Length and Transfer-Encoding breaks HTTP', async () => {
  const url = await rawService((socket) =>
    socket.end(
      'HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
    ),
  )
  const { exitCode, report } = await verifyAgainst(url, '--max-requests', '6')
  // @note Node 20 and 22 refuse the headers as they parse them; Node 24's
  // fetch reads on and finds the body's length wrong. Either is said as
  // what the answer did, not as the network.
  expect(report).toMatch(
    /the answer has both a Content-Length and a Transfer-Encoding, which HTTP forbids \(HPE_UNEXPECTED_CONTENT_LENGTH\)|the answer's body is longer or shorter than its Content-Length/,
  )
  expect(report).not.toContain('the network failed')
  expect(exitCode).toBe(3)
})

it('says the headers of an answer are too large', async () => {
  const url = await rawService((socket) =>
    socket.end(
      `HTTP/1.1 201 Created\r\n${`x-pad: ${'a'.repeat(1000)}\r\n`.repeat(40)}\r\n{}`,
    ),
  )
  const { report } = await verifyAgainst(url, '--max-requests', '6')
  expect(report).toContain(
    "the answer's headers are larger than Node reads (16 KB unless --max-http-header-size) (UND_ERR_HEADERS_OVERFLOW)",
  )
  expect(report).not.toContain('the network failed')
})
