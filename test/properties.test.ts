import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { DEMO_KEY_ONE, DEMO_KEY_TWO, REVOKED_KEY } from '../src/fixtures.ts'
import { ERROR_REGISTRY } from '../src/contract.ts'
import { CustomerSchema, TokenSchema } from '../src/model/schemas.ts'
import { send, targets, type Client } from './_targets.ts'
import { rawExchange } from './_raw.ts'
import { startServer } from './_servers.ts'

const MIB = 1_048_576
const CATALOG = ['customers:read', 'customers:write', 'tokens:write']
// `npm run fuzz` raises the count (FUZZ_RUNS) and may change the seed (FUZZ_SEED).
const RUNS = {
  seed: Number(process.env.FUZZ_SEED ?? 20_261_122),
  numRuns: Number(process.env.FUZZ_RUNS ?? 200),
}
// The sequence properties take about 5 ms a run here: `npm run fuzz`'s
// 12,500 runs need more than a minute.
const SEQUENCE_TIMEOUT_MS = Math.max(60_000, RUNS.numRuns * 20)
const encoder = new TextEncoder()

/** One request as a consumer could send it. */
interface Exchange {
  method: string
  path: string
  headers: Record<string, string>
  /** Raw bytes, so that no Content-Type is added but the one chosen. */
  body: Uint8Array<ArrayBuffer> | undefined
}

const stringify = (value: unknown): string => {
  try {
    return JSON.stringify(value) ?? ''
  } catch {
    return ''
  }
}

// Header values must be byte strings without controls (fetch and node:http
// refuse anything else), so "unicode" here means Latin-1.
const headerText = fc
  .array(
    fc.oneof(
      fc.integer({ min: 0x20, max: 0x7e }),
      fc.integer({ min: 0xa0, max: 0xff }),
    ),
    { maxLength: 40 },
  )
  .map((codes) => String.fromCharCode(...codes))

// @note No HEAD: over HTTP its answers carry no body, which the shared
// OpenAPI check of every response (test/_openapi.ts) cannot read.
const methods = fc.oneof(
  { arbitrary: fc.constant('POST'), weight: 10 },
  {
    arbitrary: fc.constantFrom(
      'GET',
      'PUT',
      'PATCH',
      'DELETE',
      'OPTIONS',
      'post',
      'get',
    ),
    weight: 2,
  },
)

const segment = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_~-]{1,12}$/),
  fc.constantFrom('customers', 'tokens', '%20', '%2F', 'caf%C3%A9', '%00'),
)

const paths = fc.oneof(
  { arbitrary: fc.constantFrom('/v1/customers', '/v2/tokens'), weight: 10 },
  {
    arbitrary: fc
      .tuple(
        fc.constantFrom('/v1', '/v2', '/v9'),
        fc.array(segment, { maxLength: 3 }),
        fc.constantFrom('', '/', '?x=1', '?'),
      )
      .map(
        ([version, segments, tail]) => [version, ...segments].join('/') + tail,
      ),
    weight: 2,
  },
  {
    arbitrary: fc.constantFrom(
      '/v1/customers/',
      '/v1/customers?expand=all',
      '/v2/tokens/',
      '/v2/customers',
      '/v1/tokens',
      '/v1/customers/cus_x',
    ),
    weight: 1,
  },
)

const authorizations = (tokens: string[]) =>
  fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 1 },
    {
      arbitrary: fc.constantFrom(
        ...[DEMO_KEY_ONE, DEMO_KEY_TWO, ...tokens].map(
          (key) => `Bearer ${key}`,
        ),
      ),
      weight: 10,
    },
    fc.constantFrom(
      `Bearer ${REVOKED_KEY}`,
      `bearer   ${DEMO_KEY_ONE}`,
      `BEARER ${DEMO_KEY_TWO}`,
      'Bearer',
      'Bearer ',
      `Basic ${DEMO_KEY_ONE}`,
      'Basic dXNlcjpwYXNz',
      `Bearer ${DEMO_KEY_ONE}x`,
      'Bearer sk_test_\u00e9\u00e8\u00ff',
      'Bearer caf\u00e9',
      '\u00c9 \u00e9',
    ),
    headerText,
    headerText.map((text) => `Bearer ${text}`),
  )

const contentTypes = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 8 },
  fc.constant(undefined),
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'text/plain',
    'text/plain;charset=UTF-8',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/problem+json',
    '',
    ';',
    'application/json;;;',
  ),
  headerText,
)

const idempotencyKeys = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 8 },
  {
    arbitrary: fc.constantFrom(
      'key-1',
      'key-2',
      '',
      'x'.repeat(255),
      'x'.repeat(256),
      'caf\u00e9',
      'two words',
    ),
    weight: 2,
  },
  { arbitrary: headerText, weight: 1 },
)

const deep = fc
  .tuple(fc.integer({ min: 1, max: 20_000 }), fc.constantFrom('[', '{"a":'))
  .map(([depth, open]) =>
    open === '['
      ? '['.repeat(depth) + ']'.repeat(depth)
      : open.repeat(depth) + '1' + '}'.repeat(depth),
  )

const texts = fc.oneof(
  {
    arbitrary: fc
      .record({
        name: fc.oneof(fc.string(), fc.stringMatching(/^[A-Z][a-z ]{0,30}$/)),
        email: fc.oneof(
          fc.emailAddress(),
          fc
            .tuple(
              fc.stringMatching(/^[a-z0-9][a-z0-9.+_-]{0,15}$/),
              fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/),
              fc.constantFrom('com', 'org', 'dev', 'CO.UK'),
            )
            .map(([local, domain, tld]) => `${local}@${domain}.${tld}`),
        ),
      })
      .map(stringify),
    weight: 10,
  },
  {
    arbitrary: fc
      .record(
        {
          scopes: fc.subarray(CATALOG),
          expires_in: fc.integer({ min: -10, max: 100_000 }),
        },
        { requiredKeys: ['scopes'] },
      )
      .map(stringify),
    weight: 6,
  },
  { arbitrary: fc.json(), weight: 2 },
  {
    arbitrary: fc
      .anything({
        withBoxedValues: true,
        withMap: true,
        withSet: true,
        withNullPrototype: true,
        withSparseArray: true,
        withDate: true,
      })
      .map(stringify),
    weight: 2,
  },
  { arbitrary: fc.string({ unit: 'binary' }), weight: 1 },
  { arbitrary: deep, weight: 1 },
  {
    arbitrary: deep.map(
      (nested) => `{"name":${nested},"email":"ada@example.com"}`,
    ),
    weight: 1,
  },
  {
    arbitrary: fc.constantFrom(
      '{"__proto__":{"x":1}}',
      '{"constructor":1}',
      '{"name":"Ada","email":"ada@example.com","__proto__":{"admin":true}}',
      '{"scopes":["customers:read"],"__proto__":{"expires_in":1}}',
      '{"scopes":["customers:read"],"constructor":{"prototype":{}}}',
      '{"name":"Ada","email":"ada@example.com","toString":1}',
    ),
    weight: 2,
  },
  {
    arbitrary: fc
      .json()
      .chain((json) => fc.nat(json.length).map((end) => json.slice(0, end))),
    weight: 2,
  },
  {
    arbitrary: fc.constant(null).map(() => ' '.repeat(MIB + 1)),
    weight: 1,
  },
)

const bodies = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 1 },
  { arbitrary: texts.map((t) => encoder.encode(t)), weight: 10 },
  // Bytes that are not UTF-8.
  {
    arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => new Uint8Array(b)),
    weight: 1,
  },
)

const exchange = (tokens: string[]): fc.Arbitrary<Exchange> =>
  fc
    .record({
      method: methods,
      path: paths,
      authorization: authorizations(tokens),
      contentType: contentTypes,
      idempotencyKey: idempotencyKeys,
      body: bodies,
    })
    .map(
      ({ method, path, authorization, contentType, idempotencyKey, body }) => {
        const headers: Record<string, string> = {}
        if (authorization !== undefined) headers.authorization = authorization
        if (contentType !== undefined) headers['content-type'] = contentType
        if (idempotencyKey !== undefined)
          headers['idempotency-key'] = idempotencyKey
        const upper = method.toUpperCase()
        return {
          method,
          path,
          headers,
          body: upper === 'GET' ? undefined : body,
        }
      },
    )

/** Whether an answer created a customer: a fresh 201 on the customer operation. */
const createdCustomer = (request: Exchange, response: Response): boolean =>
  response.status === 201 &&
  new URL(request.path, 'http://x').pathname === '/v1/customers' &&
  response.headers.get('idempotent-replayed') === null

/** Checks every promise the contract makes about one answer, whatever was sent. */
const checkAnswer = async (
  request: Exchange,
  response: Response,
): Promise<void> => {
  const { status } = response
  expect(status).toBeLessThan(500)
  const text = await response.text()
  expect(text).not.toMatch(/\n\s+at /)
  if (status === 204 && request.method === 'OPTIONS') {
    // HTTP's own question: what the path takes, with no body.
    expect(response.headers.get('allow')).toContain('OPTIONS')
    expect(text).toBe('')
    return
  }
  if (status >= 200 && status < 300) {
    expect(status).toBe(201)
    expect(request.method.toUpperCase()).toBe('POST')
    const { pathname } = new URL(request.path, 'http://x')
    const record = JSON.parse(text)
    if (pathname === '/v1/customers') CustomerSchema.parse(record)
    else if (pathname === '/v2/tokens') TokenSchema.parse(record)
    else expect.fail(`a success on ${pathname}`)
    return
  }
  expect(status).toBeGreaterThanOrEqual(400)
  expect(response.headers.get('content-type')).toBe('application/problem+json')
  const problem = JSON.parse(text)
  expect(Object.keys(ERROR_REGISTRY)).toContain(problem.code)
  expect(problem.status).toBe(status)
  expect(
    ERROR_REGISTRY[problem.code as keyof typeof ERROR_REGISTRY].status,
  ).toBe(status)
  expect(problem.request_id).toBe(response.headers.get('x-request-id'))
}

for (const target of targets) {
  describe(target.name, () => {
    const clients: Client[] = []
    afterEach(async () => {
      for (const client of clients.splice(0)) await client.close()
    })
    const start = async (): Promise<{ client: Client; tokens: string[] }> => {
      const client = await target.start({ seed: 1 })
      clients.push(client)
      const tokens: string[] = []
      for (const scopes of [CATALOG, ['customers:read']]) {
        const { status, body } = await send(client, 'POST', '/v2/tokens', {
          body: { scopes },
        })
        expect(status).toBe(201)
        tokens.push(body.token)
      }
      return { client, tokens }
    }
    const fetchExchange = (client: Client, request: Exchange) =>
      client.fetch(request.path, {
        method: request.method,
        headers: request.headers,
        ...(request.body !== undefined && { body: request.body }),
      })

    it(
      'never answers 5xx, and answers every request with a registry problem or a valid record',
      async () => {
        const { client, tokens } = await start()
        await fc.assert(
          fc.asyncProperty(exchange(tokens), async (request) => {
            const before = client.sandbox.customers.count()
            const response = await fetchExchange(client, request)
            const created = createdCustomer(request, response)
            await checkAnswer(request, response)
            expect(client.sandbox.customers.count()).toBe(
              before + (created ? 1 : 0),
            )
          }),
          RUNS,
        )
      },
      SEQUENCE_TIMEOUT_MS,
    )

    it(
      'grows the customers by exactly the number of new 201s on /v1/customers over any sequence of requests',
      async () => {
        const { client, tokens } = await start()
        await fc.assert(
          fc.asyncProperty(
            fc.array(exchange(tokens), { minLength: 1, maxLength: 6 }),
            async (requests) => {
              const before = client.sandbox.customers.count()
              let created = 0
              for (const request of requests) {
                const response = await fetchExchange(client, request)
                if (createdCustomer(request, response)) created++
                await checkAnswer(request, response)
              }
              expect(client.sandbox.customers.count()).toBe(before + created)
            },
          ),
          RUNS,
        )
      },
      SEQUENCE_TIMEOUT_MS,
    )
  })
}

// Issue 14: what the fuzz above never varied (Host, Origin, the admin
// surface, duplicate headers), against a real server over raw sockets.
const ADMIN_CALLS = [
  'GET /__sandbox/health',
  'GET /__sandbox/state',
  'GET /__sandbox/export',
  'GET /__sandbox/export?secrets=include',
  'GET /v1/../__sandbox/export?secrets=include',
  'GET /__sandbox/requests',
  'POST /__sandbox/reset',
  'POST /__sandbox/api-keys',
  'POST /__sandbox/clock',
  'POST /__sandbox/snapshots',
  'DELETE /__sandbox/requests',
  'DELETE /__sandbox/scenarios',
  'PUT /__sandbox/reset',
  'OPTIONS /__sandbox/reset',
  'GET /__sandbox/nothing',
  'POST /v1/customers',
  'POST /v2/tokens',
  'GET /openapi.json',
  'GET /',
] as const
const BAD_HOSTS = [
  'foo.123',
  'a.1',
  '1.2.3.256',
  '256.0.0.1',
  '[1]',
  'a:99999',
  'xn--',
]
const FOREIGN_ORIGINS = [
  'https://evil.example',
  'null',
  'http://127.0.0.1.evil.example',
  'http://localhost.evil.example:80',
]

it('never stops the server or answers 5xx, and never lets a foreign origin change admin state or read a full secret, whatever Host, Origin, Content-Type and duplicate headers', async () => {
  const server = await startServer({ seed: 1 })
  const own = `http://127.0.0.1:${server.port}`
  const header = (name: string, values: fc.Arbitrary<string>) =>
    fc.oneof(
      { arbitrary: fc.constant([] as [string, string][]), weight: 2 },
      {
        arbitrary: values.map((v): [string, string][] => [[name, v]]),
        weight: 4,
      },
      // The same header twice, each with its own value.
      {
        arbitrary: fc
          .tuple(values, values)
          .map(([a, b]): [string, string][] => [
            [name, a],
            [name, b],
          ]),
        weight: 1,
      },
    )
  const call = fc.record({
    line: fc.constantFrom(...ADMIN_CALLS),
    host: header(
      'Host',
      fc.oneof(
        fc.constantFrom(
          own.slice(7),
          'localhost',
          '[::1]',
          'attacker.example',
          ...BAD_HOSTS,
        ),
        headerText,
      ),
    ),
    origin: header(
      'Origin',
      fc.oneof(
        fc.constantFrom(own, 'http://localhost:5173', ...FOREIGN_ORIGINS),
        headerText,
      ),
    ),
    site: header(
      'Sec-Fetch-Site',
      fc.constantFrom('cross-site', 'same-origin', 'none'),
    ),
    type: header(
      'Content-Type',
      fc.oneof(
        fc.constantFrom(
          'application/json',
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
        ),
        headerText,
      ),
    ),
    auth: header(
      'Authorization',
      fc.constantFrom(`Bearer ${DEMO_KEY_ONE}`, 'Bearer x'),
    ),
    body: fc.constantFrom(
      '',
      '{}',
      '{"advance_seconds":60}',
      '{"name":"s1"}',
      '{"scopes":["customers:read"]}',
      'a=1',
    ),
  })
  const secretsOf = (): string[] => {
    const { data } = server.sandbox.export()
    return [...data.api_keys, ...data.tokens].map((record) => record.secret)
  }
  await server.sandbox.createApiKey()
  await fc.assert(
    fc.asyncProperty(call, async (c) => {
      const [method, path] = c.line.split(' ') as [string, string]
      const headers = [...c.host, ...c.origin, ...c.site, ...c.type, ...c.auth]
      const text = [
        `${method} ${path} HTTP/1.1`,
        ...headers.map(([name, value]) => `${name}: ${value}`),
        `Content-Length: ${c.body.length}`,
        '',
        c.body,
      ].join('\r\n')
      const secrets = secretsOf()
      const before = server.sandbox.state().accounts.length
      const answer = await rawExchange(server.port, text)
      expect(answer.status).toBeGreaterThanOrEqual(200)
      expect(answer.status).toBeLessThan(500)
      const origins = c.origin.map(([, value]) => value)
      const foreign =
        origins.length > 0 &&
        !(
          origins.length === 1 &&
          [own, 'http://localhost:5173'].includes(origins[0]!)
        )
      const admin = path.includes('__sandbox')
      if (foreign) {
        for (const secret of secrets) expect(answer.body).not.toContain(secret)
        if (admin) {
          expect(answer.headers['access-control-allow-origin']).toBe(undefined)
          if (method !== 'GET') {
            expect(answer.status).toBeGreaterThanOrEqual(400)
            expect(server.sandbox.state().accounts.length).toBe(before)
          }
        }
      }
      if (answer.status >= 400 && method !== 'OPTIONS') {
        expect(answer.headers['content-type']).toBe('application/problem+json')
        expect(Object.keys(ERROR_REGISTRY)).toContain(
          JSON.parse(answer.body).code,
        )
      }
      const health = await rawExchange(
        server.port,
        'GET /__sandbox/health HTTP/1.1\r\nHost: localhost\r\n\r\n',
      )
      expect(health.status).toBe(200)
    }),
    RUNS,
  )
}, 120_000)

it('reads every request target as the URL standard does: dot segments, encoded dots, backslashes and characters a URL escapes lead where their normalised path leads', async () => {
  const server = await startServer({ seed: 1 })
  const step = fc.constantFrom(
    'v1',
    'v2',
    'customers',
    'tokens',
    '__sandbox',
    'health',
    'state',
    '.',
    '..',
    '%2e',
    '%2E%2e',
    '.%2e',
    'a\\..',
    '%7e',
    'a^b',
    '',
  )
  const target = fc
    .tuple(
      fc.array(step, { minLength: 1, maxLength: 6 }),
      fc.constantFrom('', '?', '?secrets=include', "?a='b'", '?a=%7e'),
    )
    .map(([parts, query]) => `/${parts.join('/')}${query}`)
  const answer = async (path: string) => {
    const raw = await rawExchange(
      server.port,
      `GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`,
    )
    const code: unknown =
      raw.status >= 400 ? JSON.parse(raw.body).code : undefined
    return { status: raw.status, code }
  }
  await fc.assert(
    fc.asyncProperty(target, async (path) => {
      const normal = new URL(`http://localhost${path}`)
      expect(await answer(path)).toEqual(
        await answer(normal.pathname + normal.search),
      )
    }),
    RUNS,
  )
}, 120_000)
