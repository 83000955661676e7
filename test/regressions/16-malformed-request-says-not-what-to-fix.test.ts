import { expect, it } from 'vitest'
import { rawExchange } from '../_raw.ts'
import { startServer } from '../_servers.ts'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'

// What node:http cannot parse is a 400 whose detail says what to fix, not
// only the parser's code.
it.each([
  [
    'a lower-case method',
    'post /v1/customers HTTP/1.1\r\nHost: localhost\r\n\r\n',
    /upper case/,
  ],
  [
    'a header name with a space',
    'GET /__sandbox/health HTTP/1.1\r\nHost: localhost\r\nX Custom: 1\r\n\r\n',
    /Name: value/,
  ],
  [
    'a folded header line',
    'GET /__sandbox/health HTTP/1.1\r\nHost: localhost\r\nX-A: a\r\n b\r\n\r\n',
    /Name: value/,
  ],
  [
    'Content-Length beside Transfer-Encoding',
    'POST /v1/customers HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    /one Content-Length.*Transfer-Encoding: chunked/,
  ],
  [
    'two different Content-Lengths',
    'POST /v1/customers HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n{}',
    /one Content-Length/,
  ],
  [
    'a bad chunk size',
    // With a key: the request's answer, authentication first, is the one
    // sent, and a body the parser gave up on fails its read with the hint.
    `POST /v1/customers HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${DEMO_KEY_ONE}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    /hexadecimal size/,
  ],
  [
    'HTTP/2 with prior knowledge',
    'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
    /HTTP\/1\.1 only/,
  ],
])('answers %s with a 400 saying what to fix', async (_, text, hint) => {
  const server = await startServer({ seed: 1 })
  const answer = await rawExchange(server.port, text)
  expect(answer.status).toBe(400)
  const problem = JSON.parse(answer.body) as { code: string; detail: string }
  expect(problem.code).toBe('invalid_request')
  expect(problem.detail).toMatch(hint)
  expect(problem.detail).toMatch(/\(HPE_[A-Z0-9_]+\)/)
})
