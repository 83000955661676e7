import { describe, expect, it } from 'vitest'
import {
  DEMO_KEY_ONE,
  DEMO_KEY_TWO,
  PERSONA_READ_ONLY_KEY,
  REVOKED_KEY,
} from '../src/fixtures.ts'
import { send, targets, type Client, useClients } from './_targets.ts'

const ACCOUNT_ONE = 'acct_DemoAccount001'
const ACCOUNT_TWO = 'acct_DemoAccount002'
const NOW = '2026-11-22T11:00:00.000Z'
const MIB = 1_048_576
const ada = { name: 'Ada Lovelace', email: 'ada@example.com' }

const CHALLENGE = {
  missing: 'Bearer realm="sandbox"',
  invalid: 'Bearer realm="sandbox", error="invalid_token"',
  expired:
    'Bearer realm="sandbox", error="invalid_token", error_description="The access token expired"',
  scope: (scope: string) =>
    `Bearer realm="sandbox", error="insufficient_scope", scope="${scope}"`,
}

const OPERATIONS = [
  { path: '/v1/customers', body: ada },
  { path: '/v2/tokens', body: { scopes: ['customers:read'] } },
] as const

for (const target of targets) {
  describe(target.name, () => {
    const start = useClients(target, (client) => client.sandbox.clock.set(NOW))
    const mintToken = async (
      client: Client,
      scopes: string[],
      expiresIn?: number,
      key = DEMO_KEY_ONE,
    ): Promise<string> => {
      const { status, body } = await send(client, 'POST', '/v2/tokens', {
        key,
        body: {
          scopes,
          ...(expiresIn !== undefined && { expires_in: expiresIn }),
        },
      })
      expect(status).toBe(201)
      return body.token as string
    }
    const withAuthorization = (
      client: Client,
      path: string,
      authorization: string,
      body: unknown,
    ) =>
      send(client, 'POST', path, {
        key: null,
        body,
        headers: { authorization },
      })

    for (const { path, body } of OPERATIONS) {
      it(`returns 401 missing_credentials with a bare Bearer challenge when POST ${path} has no Authorization header`, async () => {
        const client = await start()
        const result = await send(client, 'POST', path, { key: null, body })
        expect(result.status).toBe(401)
        expect(result.body.code).toBe('missing_credentials')
        expect(result.headers.get('www-authenticate')).toBe(CHALLENGE.missing)
      })

      it(`returns 401 invalid_credentials with error="invalid_token" when POST ${path} has an unknown key`, async () => {
        const client = await start()
        const result = await send(client, 'POST', path, {
          key: 'sk_test_UnknownKeyForTheSandbox01',
          body,
        })
        expect(result.status).toBe(401)
        expect(result.body.code).toBe('invalid_credentials')
        expect(result.headers.get('www-authenticate')).toBe(CHALLENGE.invalid)
      })

      it(`returns 401 invalid_credentials with error="invalid_token" when POST ${path} has the revoked key`, async () => {
        const client = await start()
        const result = await send(client, 'POST', path, {
          key: REVOKED_KEY,
          body,
        })
        expect(result.status).toBe(401)
        expect(result.body.code).toBe('invalid_credentials')
        expect(result.headers.get('www-authenticate')).toBe(CHALLENGE.invalid)
      })

      it(`returns 401 token_expired with the expiry description when POST ${path} has an expired token`, async () => {
        const client = await start()
        const token = await mintToken(
          client,
          ['customers:write', 'tokens:write'],
          60,
        )
        client.sandbox.clock.advance(60_000)
        const result = await send(client, 'POST', path, { key: token, body })
        expect(result.status).toBe(401)
        expect(result.body.code).toBe('token_expired')
        expect(result.headers.get('www-authenticate')).toBe(CHALLENGE.expired)
      })
    }

    it('returns 403 insufficient_scope naming customers:write when a token without it creates a customer', async () => {
      const client = await start()
      const token = await mintToken(client, ['customers:read', 'tokens:write'])
      const count = client.sandbox.customers.count()
      const result = await send(client, 'POST', '/v1/customers', {
        key: token,
        body: ada,
      })
      expect(result.status).toBe(403)
      expect(result.body.code).toBe('insufficient_scope')
      expect(result.headers.get('www-authenticate')).toBe(
        CHALLENGE.scope('customers:write'),
      )
      expect(client.sandbox.customers.count()).toBe(count)
    })

    it('returns 403 insufficient_scope naming tokens:write when a token without it mints a token', async () => {
      const client = await start()
      const token = await mintToken(client, ['customers:read'])
      const result = await send(client, 'POST', '/v2/tokens', {
        key: token,
        body: { scopes: ['customers:read'] },
      })
      expect(result.status).toBe(403)
      expect(result.body.code).toBe('insufficient_scope')
      expect(result.headers.get('www-authenticate')).toBe(
        CHALLENGE.scope('tokens:write'),
      )
    })

    // A read-only API key was told it was a token ("which the token does
    // not carry", "A token can mint only scopes it carries itself").
    it('names the credential that lacks a scope: an API key as an API key, a token as a token', async () => {
      const client = await start()
      const token = await mintToken(client, ['customers:read', 'tokens:write'])
      const lacking = [
        ['/v1/customers', ada],
        ['/v2/tokens', { scopes: ['customers:write'], expires_in: 60 }],
      ] as const
      for (const [key, name] of [
        [PERSONA_READ_ONLY_KEY, 'API key'],
        [token, 'token'],
      ]) {
        for (const [path, body] of lacking) {
          const result = await send(client, 'POST', path, { key, body })
          expect(result.status, `${name} on ${path}`).toBe(403)
          expect(result.body.code).toBe('insufficient_scope')
          expect(result.body.detail).toContain('"customers:write"')
          expect(result.body.detail, `${name} on ${path}`).toMatch(
            name === 'token' ? /\btoken\b/ : /\bAPI key\b/,
          )
          if (name === 'API key')
            expect(result.body.detail).not.toMatch(/\btoken\b/)
        }
      }
    })

    for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
      it(`returns 201 when the scheme is written ${scheme}`, async () => {
        const client = await start()
        const result = await withAuthorization(
          client,
          '/v1/customers',
          `${scheme} ${DEMO_KEY_ONE}`,
          ada,
        )
        expect(result.status).toBe(201)
      })
    }

    it('returns 201 when several spaces separate the scheme from the credential', async () => {
      const client = await start()
      const result = await withAuthorization(
        client,
        '/v1/customers',
        `Bearer     ${DEMO_KEY_ONE}`,
        ada,
      )
      expect(result.status).toBe(201)
    })

    for (const authorization of [
      'Basic dXNlcjpwYXNzd29yZA==',
      `Basic ${DEMO_KEY_ONE}`,
      `Token ${DEMO_KEY_ONE}`,
      `Bearer${DEMO_KEY_ONE}`,
      `${DEMO_KEY_ONE}`,
      '',
    ]) {
      it(`returns 401 missing_credentials when Authorization is ${JSON.stringify(authorization)}`, async () => {
        const client = await start()
        const result = await withAuthorization(
          client,
          '/v1/customers',
          authorization,
          ada,
        )
        expect(result.status).toBe(401)
        expect(result.body.code).toBe('missing_credentials')
        expect(result.headers.get('www-authenticate')).toBe(CHALLENGE.missing)
      })
    }

    for (const credential of [
      'abc def',
      '!!!',
      'sk_test_DemoKey,ForTheSandbox01',
      'sk_test_D\u00e9moKeyForTheSandbox0001',
      '"sk_test_DemoKeyForTheSandbox0001"',
      '=abc',
    ]) {
      it(`returns 401 invalid_credentials for the malformed credential ${JSON.stringify(credential)}`, async () => {
        const client = await start()
        const result = await withAuthorization(
          client,
          '/v1/customers',
          `Bearer ${credential}`,
          ada,
        )
        expect(result.status).toBe(401)
        expect(result.body.code).toBe('invalid_credentials')
        expect(result.headers.get('www-authenticate')).toBe(CHALLENGE.invalid)
      })
    }

    it('returns 401 invalid_credentials when the Bearer scheme carries no credential', async () => {
      const client = await start()
      const result = await withAuthorization(
        client,
        '/v1/customers',
        'Bearer',
        ada,
      )
      expect(result.status).toBe(401)
      expect(result.body.code).toBe('invalid_credentials')
      expect(result.headers.get('www-authenticate')).toBe(CHALLENGE.invalid)
    })

    for (const credential of [
      DEMO_KEY_ONE.toUpperCase(),
      DEMO_KEY_ONE.toLowerCase(),
      `${DEMO_KEY_ONE}x`,
      DEMO_KEY_ONE.slice(0, -1),
    ]) {
      it(`returns 401 invalid_credentials for ${credential}, a near miss of a real key`, async () => {
        const client = await start()
        const result = await send(client, 'POST', '/v1/customers', {
          key: credential,
          body: ada,
        })
        expect(result.status).toBe(401)
        expect(result.body.code).toBe('invalid_credentials')
      })
    }

    it('accepts a token one millisecond before expires_at', async () => {
      const client = await start()
      const token = await mintToken(client, ['customers:write'], 60)
      client.sandbox.clock.advance(59_999)
      const result = await send(client, 'POST', '/v1/customers', {
        key: token,
        body: ada,
      })
      expect(result.status).toBe(201)
    })

    it('returns 401 token_expired at exactly expires_at', async () => {
      const client = await start()
      const { body } = await send(client, 'POST', '/v2/tokens', {
        body: { scopes: ['customers:write'], expires_in: 60 },
      })
      client.sandbox.clock.set(body.expires_at)
      const result = await send(client, 'POST', '/v1/customers', {
        key: body.token,
        body: ada,
      })
      expect(result.status).toBe(401)
      expect(result.body.code).toBe('token_expired')
      expect(result.headers.get('www-authenticate')).toBe(CHALLENGE.expired)
    })

    it('returns 401 token_expired long after expires_at and names the expiry in the detail', async () => {
      const client = await start()
      const { body } = await send(client, 'POST', '/v2/tokens', {
        body: { scopes: ['customers:write'], expires_in: 60 },
      })
      client.sandbox.clock.advance(86_400_000)
      const result = await send(client, 'POST', '/v1/customers', {
        key: body.token,
        body: ada,
      })
      expect(result.status).toBe(401)
      expect(result.body.code).toBe('token_expired')
      expect(result.body.detail).toContain(body.expires_at)
    })

    it('never expires an API key', async () => {
      const client = await start()
      client.sandbox.clock.advance(10 * 365 * 86_400_000)
      const result = await send(client, 'POST', '/v1/customers', { body: ada })
      expect(result.status).toBe(201)
    })

    it('returns 401 when there is no key and the body is bad', async () => {
      const client = await start()
      const result = await send(client, 'POST', '/v1/customers', {
        key: null,
        body: '{"name": ',
        headers: { 'content-type': 'text/plain' },
      })
      expect(result.status).toBe(401)
      expect(result.body.code).toBe('missing_credentials')
    })

    it('returns 401 for the revoked key even when the body is too large', async () => {
      const client = await start()
      const result = await send(client, 'POST', '/v1/customers', {
        key: REVOKED_KEY,
        body: 'x'.repeat(MIB + 1),
      })
      expect(result.status).toBe(401)
      expect(result.body.code).toBe('invalid_credentials')
    })

    it('returns 401 token_expired, not 403, for an expired token without the scope', async () => {
      const client = await start()
      const token = await mintToken(client, ['customers:read'], 60)
      client.sandbox.clock.advance(60_000)
      const result = await send(client, 'POST', '/v1/customers', {
        key: token,
        body: ada,
      })
      expect(result.status).toBe(401)
      expect(result.body.code).toBe('token_expired')
    })

    it('returns 403 when the token lacks the scope and the Content-Type is wrong', async () => {
      const client = await start()
      const token = await mintToken(client, ['customers:read'])
      const result = await send(client, 'POST', '/v1/customers', {
        key: token,
        body: 'not json',
        headers: { 'content-type': 'text/plain' },
      })
      expect(result.status).toBe(403)
      expect(result.body.code).toBe('insufficient_scope')
    })

    it('returns 415 before 413 when an oversized body has the wrong Content-Type', async () => {
      const client = await start()
      const result = await send(client, 'POST', '/v1/customers', {
        body: 'x'.repeat(MIB + 1),
        headers: { 'content-type': 'text/plain' },
      })
      expect(result.status).toBe(415)
      expect(result.body.code).toBe('unsupported_media_type')
    })

    it('returns 413 before 400 when an oversized body is not JSON', async () => {
      const client = await start()
      const result = await send(client, 'POST', '/v1/customers', {
        body: '{'.repeat(MIB + 1),
      })
      expect(result.status).toBe(413)
      expect(result.body.code).toBe('payload_too_large')
    })

    it('returns 400 before 422 when the body is an array of invalid customers', async () => {
      const client = await start()
      const result = await send(client, 'POST', '/v1/customers', {
        body: [{ id: 'cus_x', phone: 1 }],
      })
      expect(result.status).toBe(400)
      expect(result.body.code).toBe('invalid_json')
    })

    it('returns 422 before 409 when a taken email comes with an unknown field', async () => {
      const client = await start({ uniqueEmail: true })
      await send(client, 'POST', '/v1/customers', { body: ada })
      const result = await send(client, 'POST', '/v1/customers', {
        body: { ...ada, phone: '1' },
      })
      expect(result.status).toBe(422)
      expect(result.body.code).toBe('validation_failed')
    })

    it('returns 404 before 401 for an unknown path without a key', async () => {
      const client = await start()
      const result = await send(client, 'POST', '/v2/customers', {
        key: null,
        body: ada,
      })
      expect(result.status).toBe(404)
      expect(result.body.code).toBe('not_found')
      expect(result.headers.get('www-authenticate')).toBeNull()
    })

    it('returns 405 before 401 for another method without a key', async () => {
      const client = await start()
      const result = await send(client, 'DELETE', '/v1/customers', {
        key: null,
      })
      expect(result.status).toBe(405)
      expect(result.body.code).toBe('method_not_allowed')
      expect(result.headers.get('www-authenticate')).toBeNull()
    })

    it("never shows key two account one's customers", async () => {
      const client = await start()
      const one = await send(client, 'POST', '/v1/customers', { body: ada })
      const two = await send(client, 'POST', '/v1/customers', {
        key: DEMO_KEY_TWO,
        body: ada,
      })
      expect([one.status, two.status]).toEqual([201, 201])
      const listOne = client.sandbox.customers.list({ accountId: ACCOUNT_ONE })
      const listTwo = client.sandbox.customers.list({ accountId: ACCOUNT_TWO })
      expect(listTwo.map((c) => c.id)).toContain(two.body.id)
      expect(listTwo.map((c) => c.id)).not.toContain(one.body.id)
      expect(listOne.map((c) => c.id)).not.toContain(two.body.id)
      expect(listTwo.every((c) => c.account_id === ACCOUNT_TWO)).toBe(true)
      expect(listOne.every((c) => c.account_id === ACCOUNT_ONE)).toBe(true)
      const ids = new Set(listOne.map((c) => c.id))
      expect(listTwo.some((c) => ids.has(c.id))).toBe(false)
    })

    it('puts customers created with a token of account two into account two, never account one', async () => {
      const client = await start()
      const token = await mintToken(
        client,
        ['customers:write'],
        undefined,
        DEMO_KEY_TWO,
      )
      const before = client.sandbox.customers.count({ accountId: ACCOUNT_ONE })
      const { body } = await send(client, 'POST', '/v1/customers', {
        key: token,
        body: ada,
      })
      expect(client.sandbox.customers.get(body.id)?.account_id).toBe(
        ACCOUNT_TWO,
      )
      expect(client.sandbox.customers.count({ accountId: ACCOUNT_ONE })).toBe(
        before,
      )
    })

    it('does not replay one account’s Idempotency-Key for another account', async () => {
      const client = await start()
      const headers = { 'idempotency-key': 'shared-key' }
      const one = await send(client, 'POST', '/v1/customers', {
        body: ada,
        headers,
      })
      const two = await send(client, 'POST', '/v1/customers', {
        key: DEMO_KEY_TWO,
        body: ada,
        headers,
      })
      expect([one.status, two.status]).toEqual([201, 201])
      expect(two.headers.get('idempotent-replayed')).toBeNull()
      expect(two.body.id).not.toBe(one.body.id)
      expect(client.sandbox.customers.get(two.body.id)?.account_id).toBe(
        ACCOUNT_TWO,
      )
    })
  })
}
