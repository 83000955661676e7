import { expect, it } from 'vitest'
import { rawExchange } from '../_raw.ts'
import { startServer } from '../_servers.ts'

// node:http hands CONNECT to a `connect` event and, with no listener, closes
// the socket: a client that took the sandbox for a proxy got no answer.

it('answers CONNECT with a 405 method_not_allowed problem and Allow, then closes, and keeps serving', async () => {
  const server = await startServer({ seed: 1 })
  const answer = await rawExchange(
    server.port,
    'CONNECT api.example.test:443 HTTP/1.1\r\nHost: api.example.test:443\r\n\r\n',
  )
  expect(answer.status).toBe(405)
  expect(answer.headers['content-type']).toBe('application/problem+json')
  expect(answer.headers.allow).toBe('GET, HEAD, POST, DELETE, OPTIONS')
  expect(answer.closed).toBe(true)
  const problem = JSON.parse(answer.body) as { code: string; detail: string }
  expect(problem.code).toBe('method_not_allowed')
  expect(problem.detail).toContain('no proxy')
  expect((await fetch(`${server.url}/__sandbox/health`)).status).toBe(200)
})
