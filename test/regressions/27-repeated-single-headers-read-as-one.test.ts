import { expect, it } from 'vitest'
import { rawExchange } from '../_raw.ts'
import { startServer } from '../_servers.ts'

// Two Idempotency-Key headers (k1, k2) were joined by node:http into the
// one key "k1, k2" and accepted; two Authorization headers were a 401
// "empty or malformed"; two Content-Types a 415 that did not say why.

const KEY = 'Authorization: Bearer sk_test_DemoKeyForTheSandbox0001\r\n'
const JSON_TYPE = 'Content-Type: application/json\r\n'
const BODY = '{"name":"Ada","email":"ada@example.com"}'

const post = (headers: string): string =>
  `POST /v1/customers HTTP/1.1\r\nHost: localhost\r\n${headers}Content-Length: ${BODY.length}\r\n\r\n${BODY}`

it.each([
  [
    'Idempotency-Key',
    KEY + JSON_TYPE + 'Idempotency-Key: k1\r\nIdempotency-Key: k2\r\n',
  ],
  ['Authorization', KEY + KEY + JSON_TYPE],
  ['Content-Type', KEY + JSON_TYPE + JSON_TYPE],
  [
    'X-Sandbox-Scenario',
    KEY +
      JSON_TYPE +
      'X-Sandbox-Scenario: status=500\r\nX-Sandbox-Scenario: status=503\r\n',
  ],
])(
  'refuses a request with two %s headers with 400, saying two were sent',
  async (name, headers) => {
    const server = await startServer({ seed: 1 })
    const answer = await rawExchange(server.port, post(headers))
    expect(answer.status).toBe(400)
    expect(answer.headers['content-type']).toBe('application/problem+json')
    expect(answer.headers['x-request-id']).toMatch(/^req_/)
    const problem = JSON.parse(answer.body) as { code: string; detail: string }
    expect(problem.code).toBe('invalid_request')
    expect(problem.detail).toContain(`2 ${name} headers; send one`)
    // Nothing was created under a key nobody sent.
    const list = await fetch(`${server.url}/__sandbox/state`)
    expect(JSON.stringify(await list.json())).not.toContain('ada@example.com')
  },
)

it('still takes one Idempotency-Key whose value holds a comma', async () => {
  const server = await startServer({ seed: 1 })
  const answer = await rawExchange(
    server.port,
    post(KEY + JSON_TYPE + 'Idempotency-Key: k1, k2\r\n'),
  )
  expect(answer.status).toBe(201)
})
