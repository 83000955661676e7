import { expect, it, onTestFinished, vi } from 'vitest'
import type { ErrorFormatter } from '../src/request/errors.ts'
import {
  createServerApp,
  SandboxStartError,
  type ServerAppOptions,
} from '../src/runtimes/server-app.ts'

// The server's web app answers a `Request` with no socket at all: what a Bun
// or Deno adapter would hand it. The adapter's own part is the wire.

async function startApp(options: Partial<ServerAppOptions> = {}) {
  const app = await createServerApp({
    host: '127.0.0.1',
    playground: false,
    seed: 1,
    ...options,
  })
  onTestFinished(() => app.close())
  return app
}

/** A request as srvx hands it on: the client's address in `ip`. */
function request(
  path: string,
  init: RequestInit & { ip?: string } = {},
): Request & { ip?: string } {
  const { ip = '127.0.0.1', ...rest } = init
  const headers = new Headers(rest.headers)
  if (!headers.has('host')) headers.set('host', 'localhost:4100')
  return Object.assign(
    new Request(`http://sandbox.invalid${path}`, { ...rest, headers }),
    { ip },
  )
}

it('answers a CORS preflight of the API with the methods of the path, and credentials', async () => {
  const app = await startApp()
  const response = await app.fetch(
    request('/v1/customers', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.test',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, traceparent',
      },
    }),
  )
  expect(response.status).toBe(204)
  expect(response.headers.get('access-control-allow-origin')).toBe(
    'https://app.example.test',
  )
  expect(response.headers.get('access-control-allow-credentials')).toBe('true')
  expect(response.headers.get('access-control-allow-methods')).toBe(
    'POST, OPTIONS',
  )
  expect(response.headers.get('access-control-allow-headers')).toBe(
    'content-type, traceparent',
  )
})

it('adds CORS headers to the API answers (a 405 too) and grants a foreign origin nothing on the admin surface', async () => {
  const app = await startApp()
  const origin = 'https://app.example.test'
  const api = await app.fetch(
    request('/v1/customers', {
      headers: { origin },
    }),
  )
  expect(api.status).toBe(405)
  expect(api.headers.get('access-control-allow-origin')).toBe(origin)
  expect(api.headers.get('access-control-allow-credentials')).toBe('true')
  const admin = await app.fetch(
    request('/__sandbox/health', { headers: { origin } }),
  )
  expect(admin.status).toBe(200)
  expect(admin.headers.get('access-control-allow-origin')).toBe(null)
  expect(admin.headers.get('vary')).toBe('Origin')
})

it('refuses to start beyond loopback without an admin token', async () => {
  await expect(
    createServerApp({ host: '0.0.0.0', playground: false }),
  ).rejects.toThrow(SandboxStartError)
})

it('sends full secrets to this machine only when there is no admin token', async () => {
  const app = await startApp()
  const path = '/__sandbox/export?secrets=include'
  const far = await app.fetch(request(path, { ip: '203.0.113.5' }))
  expect(far.status).toBe(403)
  expect((await far.json()).code).toBe('forbidden_origin')
  const near = await app.fetch(request(path, { ip: '::ffff:127.0.0.1' }))
  expect(near.status).toBe(200)
})

it('renders an edge refusal through errorFormat with the sandbox request id, and logs it', async () => {
  const logs: { request_id: string | null; status: number; path: string }[] = []
  const errorFormat: ErrorFormatter = (problem) =>
    Response.json(
      { error: { kind: problem.code, id: problem.request_id } },
      { status: problem.status },
    )
  const options = { seed: 3, deterministic: true, errorFormat }
  const app = await startApp({ ...options, onLog: (log) => logs.push(log) })
  const twin = await startApp(options)
  const refused = await app.fetch(
    request('/__sandbox/health?x=1', { headers: { host: 'foo.123' } }),
  )
  expect(refused.status).toBe(400)
  expect(refused.headers.get('content-type')).toBe('application/json')
  const body = (await refused.json()) as { error: { kind: string; id: string } }
  expect(body.error.kind).toBe('invalid_host')
  const id = refused.headers.get('x-request-id')
  expect(body.error.id).toBe(id)
  // The first id of a sandbox of the same seed: the sandbox's stream drew it.
  const first = await twin.fetch(request('/__sandbox/health'))
  expect(first.headers.get('x-request-id')).toBe(id)
  expect(logs).toEqual([
    expect.objectContaining({
      request_id: id,
      status: 400,
      path: '/__sandbox/health?x=1',
    }),
  ])
})

it('turns a failure in the answer into a 500 problem with a request id', async () => {
  const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
  onTestFinished(() => errors.mockRestore())
  const app = await startApp()
  // A failure inside the sandbox, which no request caused. (A throwing
  // errorFormat no longer makes one: the error it was rendering is answered
  // as problem JSON.)
  vi.spyOn(app.sandbox, 'assumptions').mockImplementation(() => {
    throw new Error('the assumptions failed')
  })
  const response = await app.fetch(request('/__sandbox/assumptions'))
  expect(response.status).toBe(500)
  const problem = (await response.json()) as {
    code: string
    request_id: string
  }
  expect(problem.code).toBe('internal_error')
  expect(problem.request_id).toBe(response.headers.get('x-request-id'))
  const printed = errors.mock.calls.map((call) => call.join(' ')).join('\n')
  expect(printed).toContain(problem.request_id)
})
