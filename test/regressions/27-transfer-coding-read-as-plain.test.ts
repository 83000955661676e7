import { expect, it } from 'vitest'
import { rawExchange } from '../_raw.ts'
import { startServer } from '../_servers.ts'

// `Transfer-Encoding: gzip, chunked` was accepted and its body read as if
// it were not compressed.

const HEAD =
  'POST /v1/customers HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer sk_test_DemoKeyForTheSandbox0001\r\nContent-Type: application/json\r\n'
const BODY = '{"name":"Ada","email":"ada@example.com"}'
const chunked = `${BODY.length.toString(16)}\r\n${BODY}\r\n0\r\n\r\n`

it.each(['gzip, chunked', 'deflate,chunked', 'identity, chunked'])(
  'refuses Transfer-Encoding: %s with a 415 problem naming it',
  async (codings) => {
    const server = await startServer({ seed: 1 })
    const answer = await rawExchange(
      server.port,
      `${HEAD}Transfer-Encoding: ${codings}\r\n\r\n${chunked}`,
    )
    expect(answer.status).toBe(415)
    expect(answer.headers['x-request-id']).toMatch(/^req_/)
    const problem = JSON.parse(answer.body) as { code: string; detail: string }
    expect(problem.code).toBe('unsupported_media_type')
    expect(problem.detail).toContain(`Transfer-Encoding: "${codings}"`)
  },
)

it('takes a body sent with Transfer-Encoding: chunked alone', async () => {
  const server = await startServer({ seed: 1 })
  const answer = await rawExchange(
    server.port,
    `${HEAD}Transfer-Encoding: Chunked\r\n\r\n${chunked}`,
  )
  expect(answer.status).toBe(201)
})
