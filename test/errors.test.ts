import { describe, expect, it } from 'vitest'
import {
  type ErrorCode,
  type ErrorFormatter,
  type SandboxOptions,
} from '../src/index.ts'
import { DEMO_KEY_ONE, DEMO_KEY_TWO, REVOKED_KEY } from '../src/fixtures.ts'
import { ERROR_REGISTRY } from '../src/contract.ts'
import { send, targets, type Client, useClients } from './_targets.ts'

const NOW = '2026-11-22T11:00:00.000Z'
const ada = { name: 'Ada Lovelace', email: 'ada@example.com' }
const PROBLEM_KEYS = ['code', 'detail', 'request_id', 'status', 'title', 'type']

type Result = Awaited<ReturnType<typeof send>>

const mintToken = async (
  client: Client,
  scopes: string[],
  expiresIn = 3600,
): Promise<string> => {
  const { status, body } = await send(client, 'POST', '/v2/tokens', {
    body: { scopes, expires_in: expiresIn },
  })
  expect(status).toBe(201)
  return body.token as string
}

/** Codes that only the sandbox's own surface answers with. */
const SURFACE_ONLY = new Set<string>(['out_of_range'])

/** One request (or a few) that a consumer can send to get each code. */
// Answered by the standalone server's edge before the sandbox sees the
// request; test/regressions/14-*.test.ts produce each over a real socket.
const EDGE_CODES = [
  'invalid_request',
  'invalid_host',
  'forbidden_origin',
  'request_timeout',
  'host_not_allowed',
  'headers_too_large',
  'expectation_failed',
] as const

const PRODUCERS = {
  not_found: {
    produce: (client) => send(client, 'GET', '/v1/customers/cus_123'),
  },
  method_not_allowed: {
    produce: (client) => send(client, 'GET', '/v1/customers'),
  },
  missing_credentials: {
    produce: (client) =>
      send(client, 'POST', '/v1/customers', { key: null, body: ada }),
  },
  invalid_credentials: {
    produce: (client) =>
      send(client, 'POST', '/v1/customers', { key: REVOKED_KEY, body: ada }),
  },
  token_expired: {
    produce: async (client) => {
      const token = await mintToken(client, ['customers:write'], 60)
      client.sandbox.clock.advance(60_000)
      return send(client, 'POST', '/v1/customers', { key: token, body: ada })
    },
  },
  insufficient_scope: {
    produce: async (client) => {
      const token = await mintToken(client, ['customers:read'])
      return send(client, 'POST', '/v1/customers', { key: token, body: ada })
    },
  },
  unsupported_media_type: {
    produce: (client) =>
      send(client, 'POST', '/v1/customers', {
        body: 'name=Ada&email=ada%40example.com',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
  },
  payload_too_large: {
    produce: (client) =>
      send(client, 'POST', '/v1/customers', {
        body: ' '.repeat(1_048_577),
      }),
  },
  invalid_json: {
    produce: (client) => send(client, 'POST', '/v1/customers', { body: '{' }),
  },
  validation_failed: {
    produce: (client) =>
      send(client, 'POST', '/v1/customers', { body: { name: 'Ada' } }),
  },
  out_of_range: {
    produce: async (client) => {
      client.sandbox.clock.set('9999-12-31T23:00:00Z')
      return send(client, 'POST', '/__sandbox/clock', {
        body: { advance_seconds: 3600 },
      })
    },
  },
  email_taken: {
    options: { uniqueEmail: true },
    produce: async (client) => {
      await send(client, 'POST', '/v1/customers', { body: ada })
      return send(client, 'POST', '/v1/customers', { body: ada })
    },
  },
  limit_reached: {
    options: { limits: { customersPerAccount: 26 } },
    produce: async (client) => {
      // The seed gives the demo account 25 customers.
      await send(client, 'POST', '/v1/customers', { body: ada })
      return send(client, 'POST', '/v1/customers', { body: ada })
    },
  },
  idempotency_key_reused: {
    produce: async (client) => {
      const headers = { 'idempotency-key': 'order-42' }
      await send(client, 'POST', '/v1/customers', { body: ada, headers })
      return send(client, 'POST', '/v1/customers', {
        body: { ...ada, name: 'Ada King' },
        headers,
      })
    },
  },
  idempotency_in_progress: {
    produce: async (client) => {
      const headers = { 'idempotency-key': 'order-43' }
      const first = send(client, 'POST', '/v1/customers', {
        body: ada,
        headers: { ...headers, 'x-sandbox-scenario': 'delay_ms=1000' },
      })
      // Let the first request claim the key before the second arrives.
      await new Promise((resolve) => setTimeout(resolve, 250))
      const second = await send(client, 'POST', '/v1/customers', {
        body: ada,
        headers,
      })
      expect((await first).status).toBe(201)
      return second
    },
  },
  rate_limited: {
    options: { rateLimit: { limit: 1, windowSeconds: 60 } },
    produce: async (client) => {
      await send(client, 'POST', '/v1/customers', { body: ada })
      return send(client, 'POST', '/v1/customers', { body: ada })
    },
  },
  simulated_failure: {
    produce: (client) =>
      send(client, 'POST', '/v1/customers', {
        body: ada,
        headers: { 'x-sandbox-scenario': 'status=503' },
      }),
  },
} satisfies Record<
  // storage_unavailable needs a full disk under a real server: see
  // test/regressions/14-disk-full-with-data-file.test.ts.
  Exclude<
    ErrorCode,
    'internal_error' | 'storage_unavailable' | (typeof EDGE_CODES)[number]
  >,
  { options?: SandboxOptions; produce: (client: Client) => Promise<Result> }
>

/** What a consumer of the default error format can rely on, for any error. */
const expectProblem = (result: Result, code: ErrorCode): void => {
  expect(result.status).toBe(ERROR_REGISTRY[code].status)
  expect(result.headers.get('content-type')).toBe('application/problem+json')
  const keys = Object.keys(result.body).toSorted()
  expect(keys).toEqual(
    result.body.errors === undefined
      ? PROBLEM_KEYS
      : [...PROBLEM_KEYS, 'errors'].toSorted(),
  )
  expect(result.body.code).toBe(code)
  expect(result.body.status).toBe(result.status)
  expect(result.body.title).toBe(ERROR_REGISTRY[code].title)
  expect(result.body.type).toMatch(new RegExp(`^https://.+/problems/${code}$`))
  expect(result.body.detail).toEqual(expect.any(String))
  expect(result.body.detail.length).toBeGreaterThan(0)
  expect(result.body.request_id).toMatch(/^req_/)
  expect(result.body.request_id).toBe(result.headers.get('x-request-id'))
}

for (const target of targets) {
  describe(target.name, () => {
    const start = useClients(target, (client) => client.sandbox.clock.set(NOW))

    it('has a request that produces every code of the registry but internal_error and storage_unavailable', () => {
      expect(Object.keys(PRODUCERS).toSorted()).toEqual(
        Object.keys(ERROR_REGISTRY)
          .filter(
            (code) =>
              code !== 'internal_error' &&
              code !== 'storage_unavailable' &&
              !(EDGE_CODES as readonly string[]).includes(code),
          )
          .toSorted(),
      )
    })

    for (const [code, producer] of Object.entries(PRODUCERS)) {
      it(`answers ${code} as problem JSON with the registry's status ${ERROR_REGISTRY[code as ErrorCode].status}`, async () => {
        const client = await start(
          'options' in producer ? producer.options : {},
        )
        const result = await producer.produce(client)
        expectProblem(result, code as ErrorCode)
        // The journal records API calls; /__sandbox/* answers stay out of it.
        if (SURFACE_ONLY.has(code)) return
        expect(
          client.sandbox.journal
            .list()
            .find((entry) => entry.request_id === result.body.request_id),
        ).toMatchObject({ status: result.status, code })
      })
    }

    it('lists the problem of each field in errors[] for validation_failed', async () => {
      const client = await start()
      const result = await send(client, 'POST', '/v1/customers', {
        body: { email: 'not-an-email', phone: '1' },
      })
      expectProblem(result, 'validation_failed')
      expect(result.body.errors).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ field: 'name', code: 'required' }),
          expect.objectContaining({ field: 'email', code: 'invalid_format' }),
          expect.objectContaining({ field: 'phone', code: 'unknown_field' }),
        ]),
      )
      for (const error of result.body.errors) {
        expect(error.message).toEqual(expect.any(String))
      }
    })

    it('answers a simulated 500 with the status the scenario asked for', async () => {
      const client = await start()
      client.sandbox.scenarios.next('createToken', { status: 500 })
      const result = await send(client, 'POST', '/v2/tokens', {
        body: { scopes: ['customers:read'] },
      })
      expect(result.status).toBe(500)
      expect(result.body.code).toBe('simulated_failure')
      expect(result.body.status).toBe(500)
      const next = await send(client, 'POST', '/v2/tokens', {
        body: { scopes: ['customers:read'] },
      })
      expect(next.status).toBe(201)
    })

    it('sends Retry-After with rate_limited', async () => {
      const client = await start({ rateLimit: { limit: 1, windowSeconds: 60 } })
      const result = await PRODUCERS.rate_limited.produce(client)
      expect(Number(result.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(result.headers.get('ratelimit-policy')).toContain('q=1')
    })

    for (const path of [
      '/v2/customers',
      '/v1/tokens',
      '/v3/anything',
      '/v1/customers/cus_x',
      '/v1',
      '/v1/',
      '/v10/customers',
    ]) {
      for (const method of ['GET', 'POST']) {
        it(`returns 404 not_found for ${method} ${path}`, async () => {
          const client = await start()
          const result = await send(client, method, path, {
            ...(method === 'POST' && { body: ada }),
          })
          expectProblem(result, 'not_found')
          expect(result.headers.get('allow')).toBeNull()
        })
      }
    }

    for (const path of ['/v1/customers', '/v2/tokens']) {
      for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
        it(`returns 405 with Allow: POST, OPTIONS for ${method} ${path}`, async () => {
          const client = await start()
          const count = client.sandbox.customers.count()
          const result = await send(client, method, path, {
            ...(method !== 'GET' && { body: ada }),
          })
          expectProblem(result, 'method_not_allowed')
          expect(result.headers.get('allow')).toBe('POST, OPTIONS')
          expect(client.sandbox.customers.count()).toBe(count)
        })
      }
    }

    // The ledger says in words what a 405 sends; they drifted once (`Allow:
    // POST` while the answer listed OPTIONS too).
    it('states in the assumption ledger the Allow that a 405 sends', async () => {
      const client = await start()
      const { body } = await send(client, 'GET', '/__sandbox/assumptions')
      const row = body.assumptions.find(
        (item: { id: string }) => item.id === 'customer.other-operations',
      )
      for (const path of ['/v1/customers', '/v2/tokens']) {
        const result = await send(client, 'GET', path)
        expect(result.status).toBe(405)
        expect(row.default).toContain(
          `\`405\` with \`Allow: ${result.headers.get('allow')}\``,
        )
      }
    })

    it('sends a distinct X-Request-Id on every answer, successes included', async () => {
      const client = await start()
      const results = [
        await send(client, 'POST', '/v1/customers', { body: ada }),
        await send(client, 'POST', '/v2/tokens', {
          body: { scopes: ['customers:read'] },
        }),
        await send(client, 'POST', '/v1/customers', { key: null, body: ada }),
        await send(client, 'GET', '/v2/tokens'),
        await send(client, 'GET', '/v9/nothing'),
      ]
      expect(results.map((r) => r.status)).toEqual([201, 201, 401, 405, 404])
      const ids = results.map((r) => r.headers.get('x-request-id'))
      for (const id of ids) expect(id).toMatch(/^req_[0-9A-Za-z]+$/)
      expect(new Set(ids).size).toBe(ids.length)
    })

    it('sends the same X-Request-Id on a replay as the journal records for it', async () => {
      const client = await start()
      const headers = { 'idempotency-key': 'k-1' }
      await send(client, 'POST', '/v1/customers', { body: ada, headers })
      const replay = await send(client, 'POST', '/v1/customers', {
        body: ada,
        headers,
      })
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      expect(replay.headers.get('x-request-id')).toBe(
        client.sandbox.journal.last()?.request_id,
      )
    })

    it('never sends WWW-Authenticate with errors that are not about credentials', async () => {
      const client = await start()
      for (const code of [
        'unsupported_media_type',
        'invalid_json',
        'validation_failed',
        'payload_too_large',
      ] as const) {
        const result = await PRODUCERS[code].produce(client)
        expect(result.body.code).toBe(code)
        expect(result.headers.get('www-authenticate')).toBeNull()
      }
    })

    it('renders every error with a custom errorFormat, keeping the status and the headers', async () => {
      const errorFormat: ErrorFormatter = (problem) =>
        Response.json(
          {
            error: {
              code: problem.code,
              message: problem.detail,
              request_id: problem.request_id,
            },
          },
          { status: problem.status },
        )
      const client = await start({ errorFormat })

      const missing = await send(client, 'POST', '/v1/customers', {
        key: null,
        body: ada,
      })
      expect(missing.status).toBe(401)
      expect(missing.headers.get('content-type')).toMatch(/^application\/json/)
      expect(missing.headers.get('www-authenticate')).toBe(
        'Bearer realm="sandbox"',
      )
      expect(missing.body).toEqual({
        error: {
          code: 'missing_credentials',
          message: expect.any(String),
          request_id: missing.headers.get('x-request-id'),
        },
      })

      const token = await mintToken(client, ['customers:read'])
      const forbidden = await send(client, 'POST', '/v1/customers', {
        key: token,
        body: ada,
      })
      expect(forbidden.status).toBe(403)
      expect(forbidden.headers.get('www-authenticate')).toBe(
        'Bearer realm="sandbox", error="insufficient_scope", scope="customers:write"',
      )
      expect(forbidden.body.error.code).toBe('insufficient_scope')

      const invalid = await send(client, 'POST', '/v1/customers', {
        body: { name: 'Ada' },
      })
      expect(invalid.status).toBe(422)
      expect(Object.keys(invalid.body)).toEqual(['error'])
      expect(invalid.body.error.code).toBe('validation_failed')

      const created = await send(client, 'POST', '/v1/customers', {
        body: ada,
      })
      expect(created.status).toBe(201)
      expect(created.body).toEqual({ id: created.body.id, ...ada })
    })

    it('never puts the credential it was sent into an error', async () => {
      const client = await start({ v1AcceptsTokens: false })
      const expired = await mintToken(client, ['customers:write'], 60)
      const narrow = await mintToken(client, ['customers:read'])
      const full = await mintToken(client, [
        'customers:read',
        'customers:write',
      ])
      client.sandbox.clock.advance(60_000)
      const unknownKey = 'sk_test_UnknownKeyForTheSandbox01'
      const attempts: [string, string, unknown][] = [
        [REVOKED_KEY, '/v1/customers', ada],
        [unknownKey, '/v1/customers', ada],
        [`${DEMO_KEY_ONE}0`, '/v1/customers', ada],
        [expired, '/v1/customers', ada],
        [expired, '/v2/tokens', { scopes: ['customers:read'] }],
        [narrow, '/v1/customers', ada],
        [narrow, '/v2/tokens', { scopes: ['customers:read'] }],
        [full, '/v1/customers', ada],
        [DEMO_KEY_TWO, '/v1/customers', { name: 'x' }],
        [DEMO_KEY_TWO, '/v2/tokens', { scopes: ['nope:nope'] }],
      ]
      for (const [credential, path, body] of attempts) {
        const result = await send(client, 'POST', path, {
          key: credential,
          body,
        })
        expect(result.status).toBeGreaterThanOrEqual(400)
        expect(result.text).not.toContain(credential)
        expect(result.body.detail).not.toContain(credential)
        for (const [name, value] of result.headers) {
          expect(`${name}: ${value}`).not.toContain(credential)
        }
      }
      const journal = JSON.stringify(client.sandbox.journal.list())
      for (const [credential] of attempts) {
        expect(journal).not.toContain(credential)
      }
    })
  })
}
