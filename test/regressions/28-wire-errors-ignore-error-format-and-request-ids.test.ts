import { expect, it } from 'vitest'
import type { ErrorFormatter } from '../../src/request/errors.ts'
import { rawExchange } from '../_raw.ts'
import { startServer } from '../_servers.ts'

// The node adapter built three error answers of its own (malformed HTTP and
// timeouts, CONNECT, the last resort): problem JSON whatever `errorFormat`
// said, with request ids of its own drawn beside the sandbox's.

const ownFormat: ErrorFormatter = (problem) =>
  Response.json(
    { error: { kind: problem.code, id: problem.request_id } },
    { status: problem.status, headers: { 'x-format': 'own' } },
  )

const MALFORMED =
  'GET /__sandbox/health HTTP/1.1\r\nHost: localhost\r\nX Custom: 1\r\n\r\n'
const CONNECT =
  'CONNECT api.example.test:443 HTTP/1.1\r\nHost: api.example.test:443\r\n\r\n'

it.each([
  ['HTTP that node:http cannot parse', MALFORMED, 400, 'invalid_request'],
  ['CONNECT', CONNECT, 405, 'method_not_allowed'],
])(
  'renders its answer to %s through errorFormat, then closes',
  async (_name, text, status, kind) => {
    const server = await startServer({ seed: 1, errorFormat: ownFormat })
    const answer = await rawExchange(server.port, text)
    expect(answer.status).toBe(status)
    expect(answer.headers['content-type']).toBe('application/json')
    expect(answer.headers['x-format']).toBe('own')
    expect(answer.closed).toBe(true)
    const body = JSON.parse(answer.body) as {
      error: { kind: string; id: string }
    }
    expect(body.error.kind).toBe(kind)
    expect(body.error.id).toBe(answer.headers['x-request-id'])
  },
)

it('gives an answer to malformed HTTP the next request id of the sandbox, as a seeded sandbox draws them', async () => {
  const options = { seed: 7, deterministic: true }
  const refused = await startServer(options)
  const answered = await startServer(options)
  const raw = await rawExchange(refused.port, MALFORMED)
  const health = await fetch(`${answered.url}/__sandbox/health`)
  expect(raw.status).toBe(400)
  expect(raw.headers['x-request-id']).toBe(health.headers.get('x-request-id'))
  // The stream goes on: the next answer of each has the same id again.
  const [next, other] = await Promise.all([
    fetch(`${refused.url}/__sandbox/health`),
    fetch(`${answered.url}/__sandbox/health`),
  ])
  expect(next.headers.get('x-request-id')).toBe(
    other.headers.get('x-request-id'),
  )
})
