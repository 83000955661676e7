import { spawn, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { DEMO_KEY_ONE, REVOKED_KEY } from '../../src/fixtures.ts'
import {
  createSandboxServer,
  type SandboxServer,
} from '../../src/runtimes/node.ts'

// Issue 15: Stoplight Prism, as a validation proxy in front of the server,
// checks each request and each answer against openapi.json on its own terms.
const require = createRequire(import.meta.url)
const PRISM = require.resolve('@stoplight/prism-cli/dist/index.js')
const DOCUMENT = fileURLToPath(new URL('../../openapi.json', import.meta.url))

interface Proxy {
  url: string
  log(): string
  child: ChildProcess
}

/** Starts `prism proxy openapi.json <upstream> [--errors]` on a free port. */
function startPrism(upstream: string, errors: boolean): Promise<Proxy> {
  const child = spawn(
    process.execPath,
    [
      PRISM,
      'proxy',
      DOCUMENT,
      upstream,
      '--port',
      '0',
      ...(errors ? ['--errors'] : []),
    ],
    {
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let log = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`Prism did not start:\n${log}`)),
      30_000,
    )
    const read = (chunk: Buffer) => {
      log += chunk.toString()
      const match = /Prism is listening on (http:\/\/\S+)/.exec(log)
      if (match) {
        clearTimeout(timer)
        resolve({ url: match[1]!, log: () => log, child })
      }
    }
    child.stdout!.on('data', read)
    child.stderr!.on('data', read)
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`Prism exited (${code}):\n${log}`))
    })
  })
}

interface Call {
  name: string
  method?: string
  path: string
  headers?: Record<string, string>
  body?: unknown
  /** The raw body, when it is not JSON. */
  raw?: string
  /** The credential; `null` for none. Default: the demo key of account one. */
  key?: string | null
  status: number
  code?: string
}

let server: SandboxServer
let strict: Proxy
let lenient: Proxy
let token = ''
let readOnlyToken = ''

beforeAll(async () => {
  server = await createSandboxServer({ port: 0, seed: 1, playground: false })
  const upstream = `http://127.0.0.1:${server.port}`
  ;[strict, lenient] = await Promise.all([
    startPrism(upstream, true),
    startPrism(upstream, false),
  ])
}, 60_000)

afterAll(async () => {
  for (const proxy of [strict, lenient]) {
    if (proxy && proxy.child.exitCode === null) {
      const exited = new Promise((resolve) => proxy.child.on('exit', resolve))
      proxy.child.kill()
      await exited
    }
  }
  await server?.close()
})

async function send(proxy: Proxy, call: Call) {
  const method =
    call.method ??
    (call.body === undefined && call.raw === undefined ? 'GET' : 'POST')
  const key = call.key === undefined ? DEMO_KEY_ONE : call.key
  const headers: Record<string, string> = {
    ...(key !== null && { authorization: `Bearer ${key}` }),
    ...(call.body !== undefined && { 'content-type': 'application/json' }),
    ...call.headers,
  }
  const response = await fetch(proxy.url + call.path, {
    method,
    headers,
    ...(call.raw !== undefined
      ? { body: call.raw }
      : call.body !== undefined && { body: JSON.stringify(call.body) }),
  })
  const text = await response.text()
  const violations = JSON.parse(
    response.headers.get('sl-violations') ?? '[]',
  ) as { location: string[]; code: string; message: string }[]
  return { response, text, violations, body: text ? JSON.parse(text) : null }
}

const customer = { name: 'Ada Lovelace', email: 'ada@example.com' }
const SIMULATED_STATUSES = [
  400, 401, 403, 404, 409, 413, 415, 422, 429, 500, 503,
]

/** Calls the document calls valid: Prism with `--errors` must pass each through untouched. */
const validCalls = (): Call[] => [
  {
    name: 'create a customer',
    path: '/v1/customers',
    body: customer,
    status: 201,
  },
  {
    name: 'create a customer with a charset',
    path: '/v1/customers',
    body: customer,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    status: 201,
  },
  {
    name: 'create a token with only scopes',
    path: '/v2/tokens',
    body: { scopes: ['customers:read'] },
    status: 201,
  },
  {
    name: 'create a token with a lifetime',
    path: '/v2/tokens',
    body: { scopes: ['customers:write', 'tokens:write'], expires_in: 86_400 },
    status: 201,
  },
  {
    name: 'create a customer with a token',
    path: '/v1/customers',
    key: token,
    body: customer,
    status: 201,
  },
  {
    name: 'a token minting a narrower token',
    path: '/v2/tokens',
    key: token,
    body: { scopes: ['customers:write'], expires_in: 60 },
    status: 201,
  },
  ...['idem-1', 'idem-1'].map((key, index) => ({
    name: `idempotent create #${index + 1}`,
    path: '/v1/customers',
    headers: { 'idempotency-key': key },
    body: customer,
    status: 201,
  })),
  {
    name: 'an idempotency key reused with another body',
    path: '/v1/customers',
    headers: { 'idempotency-key': 'idem-1' },
    body: { ...customer, name: 'Grace Hopper' },
    status: 422,
    code: 'idempotency_key_reused',
  },
  {
    name: 'an idempotent token',
    path: '/v2/tokens',
    headers: { 'idempotency-key': 'idem-token' },
    body: { scopes: ['customers:read'] },
    status: 201,
  },
  ...SIMULATED_STATUSES.flatMap((status) =>
    (['/v1/customers', '/v2/tokens'] as const).map((path) => ({
      name: `X-Sandbox-Scenario: status=${status} on ${path}`,
      path,
      headers: { 'x-sandbox-scenario': `status=${status}` },
      body:
        path === '/v1/customers' ? customer : { scopes: ['customers:read'] },
      status,
      code: 'simulated_failure',
    })),
  ),
  {
    name: 'a scenario with a delay',
    path: '/v2/tokens',
    headers: { 'x-sandbox-scenario': 'delay_ms=5' },
    body: { scopes: ['customers:read'] },
    status: 201,
  },
  {
    name: 'a token without the scope',
    path: '/v1/customers',
    key: readOnlyToken,
    body: customer,
    status: 403,
    code: 'insufficient_scope',
  },
  {
    name: 'a revoked key',
    path: '/v1/customers',
    key: REVOKED_KEY,
    body: customer,
    status: 401,
    code: 'invalid_credentials',
  },
  { name: 'health', path: '/__sandbox/health', status: 200 },
  { name: 'state', path: '/__sandbox/state', status: 200 },
  { name: 'journal', path: '/__sandbox/requests?limit=5', status: 200 },
  { name: 'assumptions', path: '/__sandbox/assumptions', status: 200 },
  { name: 'the document', path: '/openapi.json', status: 200 },
  { name: 'export', path: '/__sandbox/export', status: 200 },
  { name: 'read the clock', path: '/__sandbox/clock', status: 200 },
  {
    name: 'queue a scenario',
    path: '/__sandbox/scenarios',
    body: { operation: 'createCustomer', status: 429, times: 1 },
    status: 201,
  },
  { name: 'list scenarios', path: '/__sandbox/scenarios', status: 200 },
  {
    name: 'a queued 429',
    path: '/v1/customers',
    body: customer,
    status: 429,
    code: 'simulated_failure',
  },
  {
    name: 'clear scenarios',
    method: 'DELETE',
    path: '/__sandbox/scenarios',
    status: 204,
  },
  { name: 'read the latency', path: '/__sandbox/latency', status: 200 },
  {
    name: 'take a snapshot',
    path: '/__sandbox/snapshots',
    body: { name: 'before-clock' },
    status: 201,
  },
  { name: 'list snapshots', path: '/__sandbox/snapshots', status: 200 },
  {
    name: 'advance the clock',
    path: '/__sandbox/clock',
    body: { advance_seconds: 60 },
    status: 200,
  },
  {
    name: 'an expired token',
    path: '/v2/tokens',
    key: shortToken,
    body: { scopes: ['customers:read'] },
    status: 401,
    code: 'token_expired',
  },
  {
    name: 'set the clock near the end of year 9999',
    path: '/__sandbox/clock',
    body: { now: '9999-12-31T23:00:00Z' },
    status: 200,
  },
  {
    name: 'a lifetime past year 9999',
    path: '/v2/tokens',
    body: { scopes: ['customers:read'], expires_in: 7200 },
    status: 422,
    code: 'validation_failed',
  },
  {
    name: 'a clock move past year 9999',
    path: '/__sandbox/clock',
    body: { advance_seconds: 7200 },
    status: 422,
    code: 'out_of_range',
  },
  {
    name: 'restore the snapshot',
    path: '/__sandbox/snapshots/restore',
    body: { name: 'before-clock' },
    status: 200,
  },
  {
    name: 'a latency range with min above max',
    path: '/__sandbox/latency',
    body: { min_ms: 500, max_ms: 100 },
    status: 422,
    code: 'validation_failed',
  },
  {
    name: 'a name wrapped in bidirectional isolates',
    path: '/v1/customers',
    body: { name: '\u2067Ada\u2069', email: 'ada@example.com' },
    status: 201,
  },
  {
    name: 'mint an API key',
    path: '/__sandbox/api-keys',
    body: { account_name: 'Prism' },
    status: 201,
  },
  {
    name: 'clear the journal',
    method: 'DELETE',
    path: '/__sandbox/requests',
    status: 204,
  },
  { name: 'reset', path: '/__sandbox/reset', body: { seed: 1 }, status: 200 },
]

/** Calls the document calls invalid: the server refuses each, and Prism finds fault with the request only. */
const invalidCalls: Call[] = [
  {
    name: 'an email whose domain label ends in "-"',
    path: '/v1/customers',
    body: { name: 'Ada', email: 'a@example-.com' },
    status: 422,
  },
  {
    name: 'a name of zero-width spaces',
    path: '/v1/customers',
    body: { name: '\u200B\u200B', email: 'ada@example.com' },
    status: 422,
  },
  {
    name: 'a name of bidirectional marks and a soft hyphen',
    path: '/v1/customers',
    body: { name: '\u200E\u202E\u00AD', email: 'ada@example.com' },
    status: 422,
  },
  {
    name: 'a name of 201 characters',
    path: '/v1/customers',
    body: { name: 'a'.repeat(201), email: 'ada@example.com' },
    status: 422,
  },
  {
    name: 'an unknown field',
    path: '/v1/customers',
    body: { ...customer, id: 'cus_x' },
    status: 422,
  },
  {
    name: 'no email',
    path: '/v1/customers',
    body: { name: 'Ada' },
    status: 422,
  },
  {
    name: 'a form body',
    path: '/v1/customers',
    raw: 'name=Ada',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    status: 415,
  },
  {
    name: 'no scopes',
    path: '/v2/tokens',
    body: { expires_in: 600 },
    status: 422,
  },
  {
    name: 'an unknown scope',
    path: '/v2/tokens',
    body: { scopes: ['invoices:read'] },
    status: 422,
  },
  {
    name: 'a scope twice',
    path: '/v2/tokens',
    body: { scopes: ['customers:read', 'customers:read'] },
    status: 422,
  },
  {
    name: 'a lifetime too short',
    path: '/v2/tokens',
    body: { scopes: ['customers:read'], expires_in: 59 },
    status: 422,
  },
  {
    name: 'a fractional lifetime',
    path: '/v2/tokens',
    body: { scopes: ['customers:read'], expires_in: 600.5 },
    status: 422,
  },
  {
    name: 'an idempotency key too long',
    path: '/v2/tokens',
    headers: { 'idempotency-key': 'k'.repeat(256) },
    body: { scopes: ['customers:read'] },
    status: 422,
  },
  {
    name: 'no credential',
    path: '/v1/customers',
    key: null,
    body: customer,
    status: 401,
  },
  {
    name: 'a clock body with both fields',
    path: '/__sandbox/clock',
    body: { advance_seconds: 60, now: '2030-01-01T00:00:00Z' },
    status: 422,
  },
  {
    name: 'a scenario with a success status',
    path: '/__sandbox/scenarios',
    body: { operation: 'createToken', status: 200 },
    status: 422,
  },
]

let shortToken = ''

it('passes every valid, scenario, clock and idempotency call through Prism --errors with no violation', async () => {
  const mint = async (scopes: string[], expires_in?: number) => {
    const { response, body } = await send(strict, {
      name: 'mint',
      path: '/v2/tokens',
      body: { scopes, ...(expires_in && { expires_in }) },
      status: 201,
    })
    expect(response.status).toBe(201)
    return body.token as string
  }
  token = await mint(['customers:write', 'tokens:write'])
  readOnlyToken = await mint(['customers:read'])
  shortToken = await mint(['tokens:write'], 60)
  const calls = validCalls()
  const seen: string[] = []
  for (const call of calls) {
    const { response, violations, body } = await send(strict, call)
    seen.push(`${call.name}: ${response.status}`)
    expect(violations, call.name).toEqual([])
    expect(response.status, `${call.name}\n${JSON.stringify(body)}`).toBe(
      call.status,
    )
    if (call.code) expect(body.code, call.name).toBe(call.code)
    if (call.status === 401) {
      expect(response.headers.get('www-authenticate'), call.name).toMatch(
        /^Bearer realm="sandbox"/,
      )
    }
  }
  expect(seen).toHaveLength(calls.length)
  expect(strict.log()).not.toMatch(/violation/i)
}, 60_000)

it('finds fault with the request only, never with the answer, for every call the document calls invalid', async () => {
  for (const call of invalidCalls) {
    const { response, violations, body } = await send(lenient, call)
    expect(response.status, `${call.name}\n${JSON.stringify(body)}`).toBe(
      call.status,
    )
    expect(body.type, call.name).toMatch(/^https:\/\/customer-token-sandbox/)
    expect(violations.length, call.name).toBeGreaterThan(0)
    for (const violation of violations) {
      expect(violation.location[0], `${call.name}: ${violation.message}`).toBe(
        'request',
      )
    }
  }
  expect(lenient.log()).not.toMatch(/response.*violation|violation.*response/i)
}, 60_000)
