import { afterEach, expect, it, vi } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import type { SandboxServerOptions } from '../../src/runtimes/node.ts'
import { httpExchange, rawExchange } from '../_raw.ts'
import { startCli, startServer } from '../_servers.ts'

afterEach(() => {
  vi.restoreAllMocks()
})

const start = (options: SandboxServerOptions = {}) =>
  startServer({ seed: 1, ...options })

// The hosts that made the server exit before (issue 14, case 1).
const BAD_HOSTS = [
  'foo.123',
  'a.1',
  '1.2.3.256',
  '256.0.0.1',
  '[1]',
  'a:99999',
  'xn--',
  // An empty label (issue 27).
  'evil..com',
  '.example.com',
  'a..:4100',
  'user@localhost',
  'local host',
  '',
]
const PATHS: [string, string][] = [
  ['GET', '/__sandbox/health'],
  ['GET', '/__sandbox/state'],
  ['GET', '/__sandbox/export'],
  ['POST', '/__sandbox/reset'],
  ['POST', '/v1/customers'],
  ['POST', '/v2/tokens'],
  ['GET', '/v1/customers'],
  ['GET', '/openapi.json'],
  ['GET', '/'],
  ['GET', '/no/such/path'],
]

const health = async (port: number) =>
  (await httpExchange(port, 'GET', '/__sandbox/health', { host: 'localhost' }))
    .status

it('returns 400 invalid_host when the Host header is not a host, on every path', async () => {
  const { port } = await start()
  for (const host of BAD_HOSTS) {
    for (const [method, path] of PATHS) {
      const answer = await httpExchange(port, method, path, {
        host,
        authorization: `Bearer ${DEMO_KEY_ONE}`,
        'content-type': 'application/json',
      })
      expect(answer.status, `${method} ${path} with Host ${host}`).toBe(400)
      const problem = JSON.parse(answer.body)
      expect(problem.code).toBe('invalid_host')
      expect(problem.request_id).toBe(answer.headers['x-request-id'])
      expect(answer.headers['content-type']).toBe('application/problem+json')
    }
    expect(await health(port)).toBe(200)
  }
})

it('returns 400 invalid_host when an HTTP/1.1 request has no Host or two', async () => {
  const { port } = await start()
  const none = await rawExchange(port, 'GET /__sandbox/health HTTP/1.1\r\n\r\n')
  expect(none.status).toBe(400)
  expect(JSON.parse(none.body).code).toBe('invalid_host')
  const two = await rawExchange(
    port,
    'GET /__sandbox/health HTTP/1.1\r\nHost: localhost\r\nHost: foo.123\r\n\r\n',
  )
  expect(two.status).toBe(400)
  expect(JSON.parse(two.body).code).toBe('invalid_host')
  // HTTP/1.0 has no Host to require.
  const old = await rawExchange(port, 'GET /__sandbox/health HTTP/1.0\r\n\r\n')
  expect(old.status).toBe(200)
})

it('returns 400 invalid_request when the request target is not a path', async () => {
  const { port } = await start()
  for (const target of ['http://127.0.0.1/__sandbox/health', '*']) {
    const answer = await rawExchange(
      port,
      `OPTIONS ${target} HTTP/1.1\r\nHost: localhost\r\n\r\n`,
    )
    expect(answer.status).toBe(400)
    expect(JSON.parse(answer.body).code).toBe('invalid_request')
  }
  expect(await health(port)).toBe(200)
})

it('keeps answering names, IPv4 and [IPv6] hosts with a port', async () => {
  const { port } = await start()
  for (const host of [
    'localhost',
    `localhost:${port}`,
    '127.0.0.1:0',
    '[::1]:65535',
    'app.localhost',
  ]) {
    expect(
      (await httpExchange(port, 'GET', '/__sandbox/health', { host })).status,
      host,
    ).toBe(200)
  }
  const created = await httpExchange(
    port,
    'POST',
    '/v1/customers',
    {
      host: 'api.example.test',
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
    },
    JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
  )
  expect(created.status).toBe(201)
})

it('survives every bad Host on a CLI server beyond loopback with an admin token, printing no stack', async () => {
  const token = 'an-admin-token-of-24-chars'
  const cli = await startCli([
    '--port',
    '0',
    '--host',
    '0.0.0.0',
    '--admin-token',
    token,
  ])
  const port = Number(new URL(cli.url).port)
  for (const host of BAD_HOSTS) {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: `Bearer ${token}` },
    ]) {
      for (const [method, path] of PATHS) {
        const answer = await httpExchange(port, method, path, {
          host,
          ...headers,
        })
        expect(answer.status, `${method} ${path} with Host ${host}`).toBe(400)
      }
    }
  }
  const alive = await httpExchange(port, 'GET', '/__sandbox/health', {
    host: 'localhost',
  })
  expect(alive.status).toBe(200)
  expect(cli.child.exitCode).toBe(null)
  expect(cli.stderr()).not.toMatch(/\n\s+at /)
})

/**
 * A server whose `GET /__sandbox/assumptions` fails inside the sandbox: an
 * error no request caused. (A throwing `errorFormat` no longer makes one:
 * the error it was rendering is answered as problem JSON; see
 * 27-error-format-returning-no-response-stops-the-server.)
 */
async function startFailing() {
  const server = await start()
  vi.spyOn(server.sandbox, 'assumptions').mockImplementation(() => {
    throw new Error('the assumptions failed')
  })
  return server
}

it('answers 500 with a request id and keeps serving when an answer cannot be built, with one line on stderr', async () => {
  const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
  const { url } = await startFailing()
  const response = await fetch(`${url}/__sandbox/assumptions`)
  expect(response.status).toBe(500)
  const problem = await response.json()
  expect(problem.code).toBe('internal_error')
  expect(problem.request_id).toBe(response.headers.get('x-request-id'))
  expect((await fetch(`${url}/__sandbox/health`)).status).toBe(200)
  const printed = errors.mock.calls.map((call) => call.join(' ')).join('\n')
  expect(printed).toContain(problem.request_id)
  expect(printed).not.toMatch(/\n\s+at /)
})

it('prints the stack of an internal error only when SANDBOX_DEBUG=1 asks', async () => {
  const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
  const { url } = await startFailing()
  const before = process.env.SANDBOX_DEBUG
  process.env.SANDBOX_DEBUG = '1'
  try {
    expect((await fetch(`${url}/__sandbox/assumptions`)).status).toBe(500)
  } finally {
    if (before === undefined) delete process.env.SANDBOX_DEBUG
    else process.env.SANDBOX_DEBUG = before
  }
  const printed = errors.mock.calls.map((call) => call.join(' ')).join('\n')
  expect(printed).toMatch(
    /the assumptions failed\n\s*Error: the assumptions failed\n\s+at /,
  )
})
