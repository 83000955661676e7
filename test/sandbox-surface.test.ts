import { afterEach, describe, expect, it, vi } from 'vitest'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import { send, targets, type Client } from './_targets.ts'

const FULL_SECRET = /sk_test_[0-9A-Za-z]{24}|tok_test_[0-9A-Za-z]{32}/

/** Reads the state, with `If-None-Match: tag` when given. */
const readState = (client: Client, tag?: string) =>
  send(client, 'GET', '/__sandbox/state', {
    headers: tag === undefined ? {} : { 'if-none-match': tag },
  })

const NEW_CUSTOMER = {
  id: 'cus_SeededForEtag1',
  account_id: 'acct_DemoAccount001',
  name: 'Seeded',
  email: 'seeded@example.com',
  created_at: '2026-01-01T00:00:00.000Z',
}

/**
 * Every kind of change the state shows, each made after the state was read
 * once: its ETag must move, or a polling client keeps a stale view.
 */
const CHANGES: [string, (client: Client) => Promise<unknown>][] = [
  [
    'a customer created through the API',
    (client) =>
      send(client, 'POST', '/v1/customers', {
        body: { name: 'Ada', email: 'ada@example.com' },
      }),
  ],
  [
    'a token created through the API',
    (client) =>
      send(client, 'POST', '/v2/tokens', {
        body: { scopes: ['customers:read'] },
      }),
  ],
  [
    'a new account and API key',
    (client) => send(client, 'POST', '/__sandbox/api-keys', { body: {} }),
  ],
  [
    'a reset to the same seed',
    (client) => send(client, 'POST', '/__sandbox/reset', { body: {} }),
  ],
  [
    'a reset to another seed',
    (client) => send(client, 'POST', '/__sandbox/reset', { body: { seed: 2 } }),
  ],
  [
    'a move of the clock over HTTP',
    (client) =>
      send(client, 'POST', '/__sandbox/clock', {
        body: { advance_seconds: 60 },
      }),
  ],
  [
    'a move of the clock through the JavaScript API',
    async (client) => client.sandbox.clock.set('2030-01-01T00:00:00Z'),
  ],
  [
    "a move of an account's own clock",
    (client) =>
      send(client, 'POST', '/__sandbox/account/clock', {
        body: { advance_seconds: 7200 },
      }),
  ],
  ['a load', (client) => client.sandbox.load(client.sandbox.dump())],
  [
    'a snapshot restored',
    async (client) => {
      await client.sandbox.snapshot('start')
      await client.sandbox.restore('start')
    },
  ],
  [
    'a customer created through sandbox.db',
    (client) => client.sandbox.db.customers.create(NEW_CUSTOMER),
  ],
  [
    'a customer renamed through sandbox.db',
    (client) =>
      client.sandbox.db.customers.update((q) => q.where({}), {
        data(customer) {
          customer.name = 'Renamed'
        },
      }),
  ],
  [
    'an API key revoked through sandbox.db',
    (client) =>
      client.sandbox.db.apiKeys.update(
        (q) => q.where({ account_id: 'acct_DemoAccount002' }),
        {
          data(key) {
            key.revoked = true
          },
        },
      ),
  ],
  [
    'an account deleted through sandbox.db',
    async (client) =>
      client.sandbox.db.accounts.delete((q) =>
        q.where({ id: 'acct_DemoAccount002' }),
      ),
  ],
]

for (const target of targets) {
  describe(target.name, () => {
    let client: Client
    afterEach(() => client?.close())
    const start = async (options = {}) =>
      (client = await target.start({ seed: 1, ...options }))

    it('answers the health check', async () => {
      await start()
      const { status, body } = await send(client, 'GET', '/__sandbox/health', {
        key: null,
      })
      expect(status).toBe(200)
      expect(body).toEqual({ status: 'ok' })
    })

    it('shows accounts, customers and tokens in the state with every secret masked', async () => {
      await start()
      await send(client, 'POST', '/v2/tokens', {
        body: { scopes: ['customers:read'] },
      })
      const { status, body, text } = await send(
        client,
        'GET',
        '/__sandbox/state',
      )
      expect(status).toBe(200)
      expect(body.accounts.map((a: { id: string }) => a.id)).toEqual([
        'acct_DemoAccount001',
        'acct_DemoAccount002',
        'acct_PersonaAccount',
      ])
      expect(body.customers).toHaveLength(50)
      expect(body.tokens).toHaveLength(1)
      expect(body.tokens[0].token).toMatch(/^tok_test_…[0-9A-Za-z]{4}$/)
      expect(body.accounts[0].api_keys[0].key).toBe('sk_test_…0001')
      expect(text).not.toMatch(FULL_SECRET)
    })

    it('resets to the seed, optionally a new one', async () => {
      await start()
      const created = await send(client, 'POST', '/v1/customers', {
        body: { name: 'A', email: 'a@example.com' },
      })
      const reset = await send(client, 'POST', '/__sandbox/reset', {
        body: { seed: 2 },
      })
      expect(reset.status).toBe(200)
      expect(reset.body).toMatchObject({ status: 'reset', seed: 2 })
      expect(client.sandbox.customers.get(created.body.id)).toBeUndefined()
      expect(client.sandbox.journal.list()).toEqual([])
      const empty = await send(client, 'POST', '/__sandbox/reset')
      expect(empty.status).toBe(200)
      expect(
        (
          await send(client, 'POST', '/__sandbox/reset', {
            body: { seed: 'x' },
          })
        ).status,
      ).toBe(422)
    })

    it('mints a new account and API key that works and sees only its own data', async () => {
      await start()
      const minted = await send(client, 'POST', '/__sandbox/api-keys', {
        body: { account_name: 'Acme' },
      })
      expect(minted.status).toBe(201)
      expect(minted.body.api_key).toMatch(/^sk_test_[0-9A-Za-z]{24}$/)
      expect(minted.body.account_id).toMatch(/^acct_[0-9A-Za-z]{14}$/)
      const created = await send(client, 'POST', '/v1/customers', {
        key: minted.body.api_key,
        body: { name: 'A', email: 'a@example.com' },
      })
      expect(created.status).toBe(201)
      expect(
        client.sandbox.customers
          .list({ accountId: minted.body.account_id })
          .map((c) => c.id),
      ).toEqual([created.body.id])
      expect(client.sandbox.accounts.get(minted.body.account_id)?.name).toBe(
        'Acme',
      )
    })

    it('lists the journal newest first, limits it and clears it', async () => {
      await start()
      await send(client, 'POST', '/v1/customers', {
        body: { name: 'A', email: 'a@example.com' },
      })
      await send(client, 'POST', '/v1/customers', { key: null, body: {} })
      const { body } = await send(client, 'GET', '/__sandbox/requests?limit=1')
      expect(body.requests).toHaveLength(1)
      expect(body.requests[0]).toMatchObject({
        method: 'POST',
        path: '/v1/customers',
        status: 401,
        account_id: null,
        credential: null,
        code: 'missing_credentials',
      })
      const all = (await send(client, 'GET', '/__sandbox/requests')).body
        .requests
      expect(all.map((r: { status: number }) => r.status)).toEqual([401, 201])
      expect(all[1]).toMatchObject({
        account_id: 'acct_DemoAccount001',
        credential: 'sk_test_…0001',
        request_id: expect.stringMatching(/^req_/),
      })
      expect(typeof all[1].duration_ms).toBe('number')
      expect(
        (await send(client, 'GET', '/__sandbox/requests?limit=abc')).status,
      ).toBe(422)
      expect((await send(client, 'DELETE', '/__sandbox/requests')).status).toBe(
        204,
      )
      expect(
        (await send(client, 'GET', '/__sandbox/requests')).body.requests,
      ).toEqual([])
    })

    it('queues scenarios that fail the next calls, then clears them', async () => {
      await start()
      const queued = await send(client, 'POST', '/__sandbox/scenarios', {
        body: { operation: 'createCustomer', status: 503, times: 2 },
      })
      expect(queued.status).toBe(201)
      expect(queued.body).toMatchObject({
        operation: 'createCustomer',
        status: 503,
        remaining: 2,
      })
      const body = { name: 'A', email: 'a@example.com' }
      for (let i = 0; i < 2; i++) {
        const failed = await send(client, 'POST', '/v1/customers', { body })
        expect(failed.status).toBe(503)
        expect(failed.body.code).toBe('simulated_failure')
        expect(failed.headers.get('retry-after')).toBe('1')
      }
      expect(
        (await send(client, 'POST', '/v1/customers', { body })).status,
      ).toBe(201)
      expect(client.sandbox.journal.list()[1]?.scenario).toBe('status=503')
      await send(client, 'POST', '/__sandbox/scenarios', {
        body: { operation: '*', status: 500 },
      })
      expect(
        (await send(client, 'GET', '/__sandbox/scenarios')).body.scenarios,
      ).toHaveLength(1)
      expect(
        (await send(client, 'DELETE', '/__sandbox/scenarios')).status,
      ).toBe(204)
      expect(
        (
          await send(client, 'POST', '/v2/tokens', {
            body: { scopes: ['customers:read'] },
          })
        ).status,
      ).toBe(201)
      expect(
        (
          await send(client, 'POST', '/__sandbox/scenarios', {
            body: { operation: 'deleteCustomer', status: 503 },
          })
        ).status,
      ).toBe(422)
      expect(
        (
          await send(client, 'POST', '/__sandbox/scenarios', {
            body: { operation: '*' },
          })
        ).status,
      ).toBe(422)
    })

    it('makes fetch reject for a network_error scenario', async () => {
      await start()
      await send(client, 'POST', '/__sandbox/scenarios', {
        body: { operation: 'createToken', network_error: true },
      })
      await expect(
        send(client, 'POST', '/v2/tokens', {
          body: { scopes: ['customers:read'] },
        }),
      ).rejects.toThrow(TypeError)
      expect(client.sandbox.journal.last()).toMatchObject({
        status: 0,
        scenario: 'network_error',
      })
    })

    it('applies X-Sandbox-Scenario to one request, and refuses a malformed one with 422', async () => {
      await start()
      const body = { name: 'A', email: 'a@example.com' }
      const failed = await send(client, 'POST', '/v1/customers', {
        body,
        headers: { 'x-sandbox-scenario': 'status=500' },
      })
      expect(failed.status).toBe(500)
      expect(failed.body.code).toBe('simulated_failure')
      expect(
        (await send(client, 'POST', '/v1/customers', { body })).status,
      ).toBe(201)
      const slow = await send(client, 'POST', '/v1/customers', {
        body,
        headers: { 'x-sandbox-scenario': 'delay_ms=10' },
      })
      expect(slow.status).toBe(201)
      await expect(
        send(client, 'POST', '/v1/customers', {
          body,
          headers: { 'x-sandbox-scenario': 'network_error' },
        }),
      ).rejects.toThrow(TypeError)
      const bad = await send(client, 'POST', '/v1/customers', {
        body,
        headers: { 'x-sandbox-scenario': 'explode=1' },
      })
      expect(bad.status).toBe(422)
      expect(bad.body.errors[0].field).toBe('X-Sandbox-Scenario')
    })

    it('serves the assumption ledger with the values in force', async () => {
      await start({ uniqueEmail: true })
      const { body } = await send(client, 'GET', '/__sandbox/assumptions')
      expect(body.assumptions.length).toBeGreaterThanOrEqual(20)
      for (const item of body.assumptions) {
        expect(Object.keys(item).toSorted()).toEqual([
          'default',
          'id',
          'interface',
          'option',
          'value',
        ])
      }
      expect(
        body.assumptions.find(
          (a: { id: string }) => a.id === 'customer.email-uniqueness',
        ),
      ).toMatchObject({ option: 'uniqueEmail', value: true })
    })

    it('tags the state with an ETag and answers 304 with no body to If-None-Match of it', async () => {
      await start()
      const first = await readState(client)
      const tag = first.headers.get('etag')!
      expect(tag).toMatch(/^(W\/)?"[^"]+"$/)
      expect(first.headers.get('cache-control')).toBe('no-cache')
      const again = await readState(client, tag)
      expect(again.status).toBe(304)
      expect(again.text).toBe('')
      expect(again.headers.get('etag')).toBe(tag)
      expect(again.headers.get('x-request-id')).toMatch(/^req_/)
      // Weak comparison (RFC 9110): either form of the tag, in a list, or *.
      const opaque = tag.replace(/^W\//, '')
      for (const header of [`"other", ${tag}`, `W/${opaque}`, opaque, '*'])
        expect((await readState(client, header)).status).toBe(304)
      expect((await readState(client, '"other"')).status).toBe(200)
    })

    it('keeps the ETag while nothing the state shows changes: a refused call, the journal, scenarios', async () => {
      await start()
      const tag = (await readState(client)).headers.get('etag')!
      await send(client, 'POST', '/v1/customers', { key: null, body: {} })
      await send(client, 'DELETE', '/__sandbox/requests')
      await send(client, 'POST', '/__sandbox/scenarios', {
        body: { operation: 'createToken', status: 503 },
      })
      expect((await readState(client, tag)).status).toBe(304)
    })

    for (const [change, make] of CHANGES) {
      it(`moves the ETag of the state on ${change}`, async () => {
        await start()
        const before = await readState(client)
        const tag = before.headers.get('etag')!
        await make(client)
        const after = await readState(client, tag)
        expect(after.status).toBe(200)
        expect(after.text).not.toBe(before.text)
        const moved = after.headers.get('etag')!
        expect(moved).not.toBe(tag)
        expect((await readState(client, moved)).status).toBe(304)
      })
    }

    it('moves the ETag of the state when a token expires as time passes, with no write', async () => {
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() })
      try {
        await start()
        await send(client, 'POST', '/v2/tokens', {
          body: { scopes: ['customers:read'], expires_in: 60 },
        })
        const before = await readState(client)
        expect(before.body.tokens[0].expired).toBe(false)
        const tag = before.headers.get('etag')!
        vi.setSystemTime(Date.now() + 30_000)
        expect((await readState(client, tag)).status).toBe(304)
        vi.setSystemTime(Date.now() + 31_000)
        const after = await readState(client, tag)
        expect(after.status).toBe(200)
        expect(after.body.tokens[0].expired).toBe(true)
        expect(after.headers.get('etag')).not.toBe(tag)
      } finally {
        vi.useRealTimers()
      }
    })

    it('makes the ETag strong while the clock is frozen and weak while it runs, whose now moves', async () => {
      await start()
      expect((await readState(client)).headers.get('etag')).toMatch(/^W\//)
      await send(client, 'POST', '/__sandbox/clock', {
        body: { now: '2030-01-01T00:00:00Z' },
      })
      const frozen = await readState(client)
      expect(frozen.headers.get('etag')).toMatch(/^"/)
      const again = await readState(client)
      expect(again.headers.get('etag')).toBe(frozen.headers.get('etag'))
      expect(again.text).toBe(frozen.text)
    })

    it('answers 404 for an unknown /__sandbox/ path and 405 with Allow for a wrong method', async () => {
      await start()
      const missing = await send(client, 'GET', '/__sandbox/nothing')
      expect(missing.status).toBe(404)
      expect(missing.body.code).toBe('not_found')
      const wrong = await send(client, 'PUT', '/__sandbox/clock')
      expect(wrong.status).toBe(405)
      expect(wrong.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS')
    })

    it('guards everything but the health check with adminToken', async () => {
      const admin = 'a-long-admin-token-value'
      await start({ adminToken: admin })
      expect(
        (await send(client, 'GET', '/__sandbox/health', { key: null })).status,
      ).toBe(200)
      const none = await send(client, 'GET', '/__sandbox/state', { key: null })
      expect(none.status).toBe(401)
      expect(none.body.code).toBe('missing_credentials')
      expect(
        (await send(client, 'GET', '/__sandbox/state', { key: DEMO_KEY_ONE }))
          .status,
      ).toBe(401)
      expect(
        (await send(client, 'GET', '/__sandbox/state', { key: admin })).status,
      ).toBe(200)
      expect(
        (await send(client, 'POST', '/__sandbox/reset', { key: null })).status,
      ).toBe(401)
    })
  })
}
