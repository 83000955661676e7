import { connect } from 'node:net'
import { expect, it } from 'vitest'
import { rawExchange } from '../_raw.ts'
import { startServer } from '../_servers.ts'

// `Expect: 200-ok` got node:http's bare 417 (no problem JSON, no request
// id); `Expect: 100-continue` with a Content-Length over the limit got
// `100 Continue`, then the 413, so the client sent the body for nothing.

const KEY = 'Authorization: Bearer sk_test_DemoKeyForTheSandbox0001\r\n'
const BODY = '{"name":"Ada","email":"ada@example.com"}'

/** What the server sends on a connection within `ms`, after `text`. */
function received(
  port: number,
  text: string,
  ms: number,
  then?: (data: string) => string | undefined,
): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let data = ''
    let sent = false
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      data += chunk
      const more = sent ? undefined : then?.(data)
      if (more !== undefined) {
        sent = true
        socket.write(more)
      }
    })
    socket.on('error', () => {})
    socket.write(text)
    setTimeout(() => {
      socket.destroy()
      resolve(data)
    }, ms)
  })
}

it('answers an Expect other than 100-continue with a 417 problem and a request id', async () => {
  const server = await startServer({ seed: 1 })
  const answer = await rawExchange(
    server.port,
    `POST /v1/customers HTTP/1.1\r\nHost: localhost\r\n${KEY}Content-Type: application/json\r\nExpect: 200-ok\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`,
  )
  expect(answer.status).toBe(417)
  expect(answer.headers['content-type']).toBe('application/problem+json')
  expect(answer.headers['x-request-id']).toMatch(/^req_/)
  const problem = JSON.parse(answer.body) as { code: string; detail: string }
  expect(problem.code).toBe('expectation_failed')
  expect(problem.detail).toContain('"200-ok"')
})

it('answers Expect: 100-continue with a Content-Length over the limit with 413 at once, without 100 Continue', async () => {
  const server = await startServer({ seed: 1, maxBodyBytes: 1000 })
  const data = await received(
    server.port,
    `POST /v1/customers HTTP/1.1\r\nHost: localhost\r\n${KEY}Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n`,
    500,
  )
  expect(data).not.toContain('100 Continue')
  expect(data).toMatch(/^HTTP\/1\.1 413 /)
  expect(data).toContain('"code":"payload_too_large"')
})

it('answers Expect: 100-continue without a credential with 401 at once, without 100 Continue', async () => {
  const server = await startServer({ seed: 1 })
  const data = await received(
    server.port,
    `POST /v1/customers HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${BODY.length}\r\n\r\n`,
    500,
  )
  expect(data).toMatch(/^HTTP\/1\.1 401 /)
})

it('sends 100 Continue for a body it will read, then answers it', async () => {
  const server = await startServer({ seed: 1 })
  const data = await received(
    server.port,
    `POST /v1/customers HTTP/1.1\r\nHost: localhost\r\n${KEY}Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${BODY.length}\r\n\r\n`,
    1000,
    (sofar) => (sofar.includes('100 Continue\r\n\r\n') ? BODY : undefined),
  )
  expect(data).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 /)
})
