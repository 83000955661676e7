import { request as httpRequest } from 'node:http'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import {
  createSandboxServer,
  type SandboxServer,
  type SandboxServerOptions,
} from '../src/runtimes/node.ts'
import { startServer } from './_servers.ts'

const start = (options: SandboxServerOptions = {}) =>
  startServer({ seed: 1, ...options })

const auth = {
  authorization: `Bearer ${DEMO_KEY_ONE}`,
  'content-type': 'application/json',
}

it('answers a CORS preflight from another origin with the headers a browser app needs', async () => {
  const { url } = await start()
  const response = await fetch(`${url}/v1/customers`, {
    method: 'OPTIONS',
    headers: {
      origin: 'http://app.example.test',
      'access-control-request-method': 'POST',
      'access-control-request-headers':
        'authorization, content-type, idempotency-key, x-sandbox-scenario',
    },
  })
  expect(response.status).toBe(204)
  expect(response.headers.get('access-control-allow-origin')).toBe(
    'http://app.example.test',
  )
  const allowed = response.headers
    .get('access-control-allow-headers')!
    .toLowerCase()
  for (const header of [
    'authorization',
    'content-type',
    'idempotency-key',
    'x-sandbox-scenario',
  ]) {
    expect(allowed).toContain(header)
  }
  expect(response.headers.get('access-control-allow-methods')).toContain('POST')
  // Regression: the preflight said `Vary: Origin, Origin, …`.
  expect(response.headers.get('vary')).toBe(
    'Origin, Access-Control-Request-Headers',
  )
})

it('exposes the sandbox headers to browser apps on every answer', async () => {
  const { url } = await start()
  const response = await fetch(`${url}/v1/customers`, {
    method: 'POST',
    headers: { origin: 'http://app.example.test' },
  })
  expect(response.status).toBe(401)
  const exposed = response.headers
    .get('access-control-expose-headers')!
    .toLowerCase()
  for (const header of [
    'x-request-id',
    'retry-after',
    'ratelimit',
    'ratelimit-policy',
    'idempotent-replayed',
    'www-authenticate',
    // The playground on another origin polls the state with If-None-Match.
    'etag',
    'accept-post',
  ]) {
    expect(exposed.split(/,\s*/)).toContain(header)
  }
  expect(response.headers.get('access-control-allow-origin')).toBe(
    'http://app.example.test',
  )
})

it.each([
  ['a created customer', 'POST', '/v1/customers', 201],
  ['a minted token', 'POST', '/v2/tokens', 201],
  ['an idempotent replay', 'POST', '/v1/customers', 201],
  ['a validation error', 'POST', '/v1/customers', 422],
  ['the sandbox surface', 'GET', '/__sandbox/health', 200],
  ['a path outside the API', 'GET', '/nowhere', 404],
] as const)(
  'sends the CORS headers on %s, with and without an Origin',
  async (kind, method, path, status) => {
    const { url } = await start()
    const body =
      kind === 'a minted token'
        ? { scopes: ['customers:read'], expires_in: 60 }
        : kind === 'a validation error'
          ? { email: 42 }
          : { name: 'Ada', email: 'ada@example.com' }
    // The admin surface grants CORS to loopback origins only (issue 14).
    const other = path.startsWith('/__sandbox/')
      ? 'http://localhost:5173'
      : 'http://app.example.test'
    for (const origin of [other, null]) {
      const send = () =>
        fetch(`${url}${path}`, {
          method,
          headers: {
            ...(method === 'POST' && {
              ...auth,
              'idempotency-key': `k-${origin}`,
            }),
            ...(origin !== null && { origin }),
          },
          ...(method === 'POST' && { body: JSON.stringify(body) }),
        })
      let response = await send()
      if (kind === 'an idempotent replay') {
        response = await send()
        expect(response.headers.get('idempotent-replayed')).toBe('true')
      }
      expect(response.status).toBe(status)
      expect(response.headers.get('access-control-allow-origin')).toBe(
        origin ?? '*',
      )
      expect(response.headers.get('access-control-expose-headers')).toContain(
        'X-Request-Id',
      )
      expect(response.headers.get('vary')).toBe(
        origin === null ? null : 'Origin',
      )
      if (path !== '/nowhere') {
        expect(response.headers.get('x-request-id')).toMatch(/^req_/)
      }
    }
  },
)

it('answers a 404 problem for paths outside the API and the sandbox surface', async () => {
  const { url } = await start()
  const response = await fetch(`${url}/customers`)
  expect(response.status).toBe(404)
  expect(response.headers.get('content-type')).toBe('application/problem+json')
  expect(await response.json()).toMatchObject({
    code: 'not_found',
    status: 404,
  })
})

it('sends reason phrases in the status line', async () => {
  const { url } = await start()
  const response = await fetch(`${url}/v1/customers`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
  })
  expect(response.status).toBe(201)
  expect(response.statusText).toBe('Created')
})

it('refuses a declared oversized body with 413 before reading it, and closes the connection', async () => {
  const { port } = await start({ maxBodyBytes: 1024 })
  const { status, connection } = await new Promise<{
    status: number
    connection: string | undefined
  }>((resolve, reject) => {
    const req = httpRequest(
      {
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/v1/customers',
        headers: { ...auth, 'content-length': String(50 * 1024 * 1024) },
      },
      (res) => {
        res.resume()
        resolve({ status: res.statusCode!, connection: res.headers.connection })
      },
    )
    req.on('error', reject)
    // Send only the first chunk: the answer must come without the rest.
    req.write('{"name":"')
  })
  expect(status).toBe(413)
  expect(connection).toBe('close')
})

it('cuts off a streamed oversized body with 413', async () => {
  const { url } = await start({ maxBodyBytes: 1024 })
  const chunk = new TextEncoder().encode('x'.repeat(512))
  let sent = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent++ < 10_000) controller.enqueue(chunk)
      else controller.close()
    },
  })
  const response = await fetch(`${url}/v1/customers`, {
    method: 'POST',
    headers: auth,
    body,
    duplex: 'half',
  } as RequestInit)
  expect(response.status).toBe(413)
  expect((await response.json()).code).toBe('payload_too_large')
  expect(sent).toBeLessThan(10_000)
})

it('drops the connection for a network_error scenario, so fetch rejects', async () => {
  const { url, sandbox } = await start()
  sandbox.scenarios.next('createCustomer', { networkError: true })
  await expect(
    fetch(`${url}/v1/customers`, { method: 'POST', headers: auth, body: '{}' }),
  ).rejects.toThrow(TypeError)
  const after = await fetch(`${url}/v1/customers`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
  })
  expect(after.status).toBe(201)
})

it('serves the API under the base path of baseUrl on its own origin', async () => {
  const { url } = await start({ baseUrl: 'https://api.acme.test/api' })
  const created = await fetch(`${url}/api/v1/customers`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
  })
  expect(created.status).toBe(201)
  expect(
    (await fetch(`${url}/v1/customers`, { method: 'POST', headers: auth }))
      .status,
  ).toBe(404)
})

it('uses random ids and secrets by default, unlike the in-process sandbox', async () => {
  const [a, b] = await Promise.all([start(), start()])
  const create = (url: string) =>
    fetch(`${url}/v1/customers`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'A', email: 'a@example.com' }),
    }).then((r) => r.json() as Promise<{ id: string }>)
  expect((await create(a.url)).id).not.toBe((await create(b.url)).id)
  // The seeded data is the same for the same seed all the same.
  const seeded = (server: SandboxServer) =>
    server.sandbox.customers
      .list()
      .filter((customer) => customer.name !== 'A')
      .map(({ id, name, email }) => ({ id, name, email }))
  expect(seeded(a)).toEqual(seeded(b))
})

it('closes gracefully: requests under way finish, then the port is free', async () => {
  const server = await createSandboxServer({ port: 0 })
  const pending = fetch(`${server.url}/v1/customers`, {
    method: 'POST',
    headers: { ...auth, 'x-sandbox-scenario': 'delay_ms=200' },
    body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
  })
  await new Promise((resolve) => setTimeout(resolve, 50))
  await server.close()
  expect((await pending).status).toBe(201)
  await expect(fetch(`${server.url}/__sandbox/health`)).rejects.toThrow()
})

it('refuses to listen beyond loopback without an admin token', async () => {
  await expect(
    createSandboxServer({ host: '0.0.0.0', port: 0 }),
  ).rejects.toThrow(/Refusing to listen on 0\.0\.0\.0/)
})

it('answers 400 invalid_json for a body that is not UTF-8, and reads a real U+FFFD as one', async () => {
  const { url } = await start()
  const bad = await fetch(`${url}/v1/customers`, {
    method: 'POST',
    headers: auth,
    body: new Uint8Array([
      0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d,
    ]),
  })
  expect(bad.status).toBe(400)
  expect((await bad.json()).detail).toMatch(/UTF-8/)
  // A 4-byte sequence cut after 3 bytes: as long as the U+FFFD a lenient
  // decoder would put in its place.
  const truncated = await fetch(`${url}/v1/customers`, {
    method: 'POST',
    headers: auth,
    body: new Uint8Array([
      0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xf0, 0x9f, 0x98,
      0x22, 0x7d,
    ]),
  })
  expect(truncated.status).toBe(400)
  expect((await truncated.json()).detail).toMatch(/UTF-8/)
  const replacement = await fetch(`${url}/v1/customers`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: 'A \uFFFD B', email: 'a@example.com' }),
  })
  expect(replacement.status).toBe(201)
  expect((await replacement.json()).name).toBe('A \uFFFD B')
})

/**
 * One request over node:http with its path as written (no dot segments
 * resolved) and headers as raw lines (repeats allowed).
 */
const rawPost = (
  url: string,
  path: string,
  headers: [string, string][],
  body: string,
) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const { hostname, port } = new URL(url)
    const req = httpRequest(
      {
        hostname,
        port,
        path,
        method: 'POST',
        // Raw headers: node adds neither Host nor Content-Length itself.
        headers: [
          ['host', new URL(url).host],
          ...headers,
          ['content-length', String(Buffer.byteLength(body))],
        ].flat(),
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (text += chunk))
        res.on('end', () => resolve({ status: res.statusCode!, body: text }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })

it('answers the operations with a query string, or a path that only normalises to theirs, as on their exact path', async () => {
  const { url, sandbox } = await start()
  const body = JSON.stringify({ name: 'Ada', email: 'ada@example.com' })
  const headers: [string, string][] = [
    ['authorization', `Bearer ${DEMO_KEY_ONE}`],
    ['content-type', 'application/json'],
  ]
  // Sent as they are: fetch would normalise the dot segments itself.
  for (const path of [
    '/v1/customers?ref=1',
    '/v1/./customers',
    '/v1/x/../customers',
  ]) {
    const response = await rawPost(url, path, headers, body)
    expect(response.status, path).toBe(201)
    expect(JSON.parse(response.body).name).toBe('Ada')
  }
  expect(sandbox.journal.list().map((entry) => entry.path)).toEqual([
    '/v1/customers',
    '/v1/customers',
    '/v1/customers',
  ])
})

it('refuses repeated Authorization headers as ambiguous, where one of them alone is a credential', async () => {
  const { url } = await start()
  const body = JSON.stringify({ name: 'Ada', email: 'ada@example.com' })
  const once = await rawPost(
    url,
    '/v1/customers',
    [
      ['authorization', `Bearer ${DEMO_KEY_ONE}`],
      ['content-type', 'application/json'],
    ],
    body,
  )
  expect(once.status).toBe(201)
  const twice = await rawPost(
    url,
    '/v1/customers',
    [
      ['authorization', `Bearer ${DEMO_KEY_ONE}`],
      ['Authorization', `Bearer ${DEMO_KEY_ONE}`],
      ['content-type', 'application/json'],
    ],
    body,
  )
  expect(twice.status).toBe(400)
  expect(JSON.parse(twice.body)).toMatchObject({
    code: 'invalid_request',
    detail: expect.stringContaining('2 Authorization headers; send one'),
  })
})

it('reads a chunked body with no Content-Length, and keeps serving after a client gives up mid-body', async () => {
  const { url, sandbox } = await start()
  const created = await fetch(`${url}/v1/customers`, {
    method: 'POST',
    headers: auth,
    body: new Blob([
      JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
    ]).stream(),
    duplex: 'half',
  } as RequestInit)
  expect(created.status).toBe(201)
  expect((await created.json()).name).toBe('Ada')

  await new Promise<void>((resolve) => {
    const req = httpRequest(`${url}/v1/customers`, {
      method: 'POST',
      headers: { ...auth, 'content-length': '1000' },
    })
    req.on('error', () => resolve())
    req.write('{"name":"A')
    setTimeout(() => {
      req.destroy()
      resolve()
    }, 50)
  })
  // The journal (newest first) says the body was cut short, not that the
  // sandbox failed.
  await expect
    .poll(() => sandbox.journal.list().map((entry) => entry.code))
    .toEqual(['invalid_json', null])
  const after = await fetch(`${url}/v2/tokens`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ scopes: ['customers:read'] }),
  })
  expect(after.status).toBe(201)
  expect(after.headers.get('cache-control')).toBe('no-store')
})

it('journals a client that leaves while its request waits, or mid-way through a chunked body, as a body cut short', async () => {
  const { url, sandbox } = await start({ latency: { min: 300, max: 300 } })
  const leave = (chunked: boolean, afterMs: number) =>
    new Promise<void>((resolve) => {
      const req = httpRequest(`${url}/v1/customers`, {
        method: 'POST',
        headers: chunked
          ? auth
          : { ...auth, 'content-length': String('{"name":"Ada"}'.length) },
      })
      req.on('error', () => {})
      req.write(chunked ? '{"name":' : '{"name":"Ada"}')
      setTimeout(() => {
        req.destroy()
        resolve()
      }, afterMs)
    })
  // Gone before the sandbox reads the body (it waits 300 ms first)…
  await leave(false, 100)
  await leave(true, 100)
  // …and gone after it started reading a chunked body.
  await leave(true, 500)
  await expect
    .poll(() => sandbox.journal.list().map((entry) => entry.code), {
      timeout: 3000,
    })
    .toEqual(['invalid_json', 'invalid_json', 'invalid_json'])
  expect(sandbox.journal.list().map((entry) => entry.status)).toEqual([
    400, 400, 400,
  ])
})

it('drops a leading byte order mark from a body, as a web Request does, also under a base path', async () => {
  for (const baseUrl of [undefined, 'https://api.acme.test/api']) {
    const { url } = await start(baseUrl ? { baseUrl } : {})
    const path = baseUrl ? '/api/v1/customers' : '/v1/customers'
    const json = new TextEncoder().encode(
      JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
    )
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: auth,
      body: new Uint8Array([0xef, 0xbb, 0xbf, ...json]),
    })
    expect(response.status, String(baseUrl)).toBe(201)
    expect((await response.json()).name).toBe('Ada')
  }
})
