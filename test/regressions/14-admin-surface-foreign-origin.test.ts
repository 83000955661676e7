import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE, DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'
import { createSandbox } from '../../src/index.ts'
import type {
  SandboxServer,
  SandboxServerOptions,
} from '../../src/runtimes/node.ts'
import { httpExchange } from '../_raw.ts'
import { runCli, startServer, tempFolder } from '../_servers.ts'

const start = (options: SandboxServerOptions = {}) =>
  startServer({ seed: 1, ...options })

const EVIL = 'https://evil.example'
const ask = (
  server: SandboxServer,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
) =>
  httpExchange(
    server.port,
    method,
    path,
    { host: `127.0.0.1:${server.port}`, ...headers },
    body,
  )

it('answers GET /__sandbox/export from a foreign Origin with no CORS grant and no full secret', async () => {
  const server = await start()
  const minted = await server.sandbox.createApiKey()
  for (const path of [
    '/__sandbox/export',
    '/__sandbox/state',
    '/__sandbox/requests',
  ]) {
    const answer = await ask(server, 'GET', path, { origin: EVIL })
    expect(answer.status, path).toBe(200)
    expect(answer.headers['access-control-allow-origin'], path).toBe(undefined)
    expect(answer.headers['access-control-allow-credentials']).toBe(undefined)
    expect(answer.body).not.toContain(DEMO_KEY_ONE)
    expect(answer.body).not.toContain(minted.apiKey)
  }
})

it('returns 403 forbidden_origin for a simple cross-origin POST or DELETE to the admin surface, changing nothing', async () => {
  const server = await start()
  const accounts = server.sandbox.state().accounts.length
  for (const [method, path] of [
    ['POST', '/__sandbox/api-keys'],
    ['POST', '/__sandbox/reset'],
    ['POST', '/__sandbox/clock'],
    ['DELETE', '/__sandbox/requests'],
    ['DELETE', '/__sandbox/scenarios'],
  ] as const) {
    for (const origin of [EVIL, 'null', 'http://127.0.0.1.evil.example']) {
      const answer = await ask(
        server,
        method,
        path,
        { origin, 'content-type': 'text/plain' },
        '{"advance_seconds": 60}',
      )
      expect(answer.status, `${method} ${path} from ${origin}`).toBe(403)
      expect(JSON.parse(answer.body).code).toBe('forbidden_origin')
      expect(answer.headers['access-control-allow-origin']).toBe(undefined)
    }
  }
  expect(server.sandbox.state().accounts.length).toBe(accounts)
})

it('returns 403 forbidden_origin for a state-changing admin call marked Sec-Fetch-Site: cross-site without an Origin', async () => {
  const server = await start()
  const answer = await ask(server, 'POST', '/__sandbox/api-keys', {
    'sec-fetch-site': 'cross-site',
  })
  expect(answer.status).toBe(403)
  expect(JSON.parse(answer.body).code).toBe('forbidden_origin')
})

it('gives no CORS grant to a preflight for the admin surface from a foreign origin', async () => {
  const server = await start()
  const answer = await ask(server, 'OPTIONS', '/__sandbox/reset', {
    origin: EVIL,
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'content-type',
  })
  expect(answer.status).toBe(403)
  expect(answer.headers['access-control-allow-origin']).toBe(undefined)
  expect(answer.headers['access-control-allow-methods']).toBe(undefined)
})

it('keeps the admin surface working for loopback origins, its own origin, adminOrigins and callers without an Origin', async () => {
  const server = await start({ adminOrigins: ['https://dev.example.test'] })
  for (const origin of [
    'http://localhost:5173',
    'https://127.0.0.1:8443',
    'http://[::1]:3000',
    `http://127.0.0.1:${server.port}`,
    'https://dev.example.test',
    undefined,
  ]) {
    const headers: Record<string, string> =
      origin === undefined ? {} : { origin }
    const created = await ask(server, 'POST', '/__sandbox/api-keys', headers)
    expect(created.status, String(origin)).toBe(201)
    const exported = await ask(server, 'GET', '/__sandbox/state', headers)
    expect(exported.headers['access-control-allow-origin']).toBe(origin ?? '*')
    const preflight = await ask(server, 'OPTIONS', '/__sandbox/reset', {
      ...headers,
      'access-control-request-method': 'POST',
    })
    expect(preflight.status).toBe(204)
  }
})

it('returns 421 host_not_allowed on the admin surface of a loopback server for a Host that is not loopback (DNS rebinding)', async () => {
  const server = await start({ allowedHosts: ['sandbox.internal'] })
  for (const host of ['attacker.example', `attacker.example:${server.port}`]) {
    for (const [method, path] of [
      ['GET', '/__sandbox/export'],
      ['GET', '/__sandbox/health'],
      ['POST', '/__sandbox/reset'],
    ]) {
      const answer = await httpExchange(server.port, method!, path!, { host })
      expect(answer.status, `${method} ${path} Host ${host}`).toBe(421)
      expect(JSON.parse(answer.body).code).toBe('host_not_allowed')
    }
  }
  const allowed = await httpExchange(server.port, 'GET', '/__sandbox/state', {
    host: `sandbox.internal:${server.port}`,
  })
  expect(allowed.status).toBe(200)
  // The API stays reachable under any name that maps to this machine.
  const api = await httpExchange(
    server.port,
    'POST',
    '/v2/tokens',
    { host: 'api.example.test', authorization: `Bearer ${DEMO_KEY_TWO}` },
    JSON.stringify({ scopes: ['customers:read'] }),
  )
  expect(api.status).toBe(201)
})

it('masks every secret in GET /__sandbox/export unless asked with ?secrets=include', async () => {
  const server = await start()
  const minted = await server.sandbox.createApiKey()
  const masked = await ask(server, 'GET', '/__sandbox/export')
  expect(masked.status).toBe(200)
  const session = JSON.parse(masked.body)
  expect(session.secrets).toBe('masked')
  expect(masked.body).not.toContain(DEMO_KEY_ONE)
  expect(masked.body).not.toContain(minted.apiKey)
  expect(
    session.data.api_keys.map((k: { secret: string }) => k.secret),
  ).toContain('sk_test_…0001')
  const full = await ask(server, 'GET', '/__sandbox/export?secrets=include')
  expect(full.body).toContain(minted.apiKey)
  const foreign = await ask(
    server,
    'GET',
    '/__sandbox/export?secrets=include',
    {
      origin: EVIL,
    },
  )
  expect(foreign.status).toBe(403)
  expect(foreign.body).not.toContain(minted.apiKey)
  const wrong = await ask(server, 'GET', '/__sandbox/export?secrets=all')
  expect(wrong.status).toBe(422)
})

it('refuses to replay a masked export, in the JavaScript API and with --from', async () => {
  const server = await start()
  const masked = (await ask(server, 'GET', '/__sandbox/export')).body
  expect(() => createSandbox({ from: JSON.parse(masked) })).toThrow(
    /secrets are masked/,
  )
  const file = join(await tempFolder('sandbox-export-'), 'session.json')
  await writeFile(file, masked)
  const cli = runCli(['--port', '0', '--quiet', '--from', file])
  expect(await cli.exited).toBe(2)
  expect(cli.stderr()).toMatch(/secrets are masked.*\?secrets=include/)
  expect(cli.stderr()).not.toMatch(/\n\s+at /)
})

it('reflects the requested headers in API preflights and answers credentialed API requests with the origin, not the admin surface', async () => {
  const server = await start()
  const origin = 'https://app.example.test'
  const preflight = await ask(server, 'OPTIONS', '/v1/customers', {
    origin,
    'access-control-request-method': 'POST',
    'access-control-request-headers':
      'authorization, content-type, traceparent',
  })
  expect(preflight.status).toBe(204)
  expect(preflight.headers['access-control-allow-origin']).toBe(origin)
  expect(preflight.headers['access-control-allow-headers']).toBe(
    'authorization, content-type, traceparent',
  )
  expect(preflight.headers['access-control-allow-credentials']).toBe('true')
  const created = await ask(
    server,
    'POST',
    '/v1/customers',
    {
      origin,
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
      cookie: 'session=1',
    },
    JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
  )
  expect(created.status).toBe(201)
  expect(created.headers['access-control-allow-origin']).toBe(origin)
  expect(created.headers['access-control-allow-credentials']).toBe('true')
  const surface = await ask(server, 'GET', '/__sandbox/health', {
    origin: 'http://localhost:5173',
  })
  expect(surface.headers['access-control-allow-credentials']).toBe(undefined)
})
