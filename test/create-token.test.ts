import { describe, expect, it } from 'vitest'
import { DEMO_KEY_ONE, DEMO_KEY_TWO } from '../src/fixtures.ts'
import { send, targets, type Client, useClients } from './_targets.ts'

const ACCOUNT_ONE = 'acct_DemoAccount001'
const ACCOUNT_TWO = 'acct_DemoAccount002'
const NOW = '2026-11-22T11:00:00.000Z'
const TOKEN_FIELDS = [
  'created_at',
  'expires_at',
  'expires_in',
  'id',
  'scopes',
  'token',
  'token_type',
]
const ada = { name: 'Ada Lovelace', email: 'ada@example.com' }

for (const target of targets) {
  describe(target.name, () => {
    const start = useClients(target, (client) => client.sandbox.clock.set(NOW))
    const mint = (
      client: Client,
      body: unknown,
      key: string = DEMO_KEY_ONE,
      headers: Record<string, string> = {},
    ) => send(client, 'POST', '/v2/tokens', { key, body, headers })
    const mintToken = async (
      client: Client,
      body: unknown,
      key: string = DEMO_KEY_ONE,
    ): Promise<string> => {
      const { status, body: token } = await mint(client, body, key)
      expect(status).toBe(201)
      return token.token as string
    }
    const expectFieldError = (
      result: { status: number; body: any },
      field: string,
    ): { code: string; message: string } => {
      expect(result.status).toBe(422)
      expect(result.body.code).toBe('validation_failed')
      expect(
        new Set(result.body.errors.map((e: { field: string }) => e.field)),
      ).toEqual(new Set([field]))
      return result.body.errors[0]
    }

    it('returns 201 with the token record when an API key mints a token', async () => {
      const client = await start()
      const { status, body, headers } = await mint(client, {
        scopes: ['customers:read'],
      })
      expect(status).toBe(201)
      expect(Object.keys(body).toSorted()).toEqual(TOKEN_FIELDS)
      expect(body).toEqual({
        id: expect.stringMatching(/^tkn_[0-9A-Za-z]{14}$/),
        token: expect.any(String),
        token_type: 'Bearer',
        scopes: ['customers:read'],
        expires_in: 3600,
        expires_at: '2026-11-22T12:00:00.000Z',
        created_at: NOW,
      })
      expect(headers.get('content-type')).toMatch(/^application\/json/)
    })

    it('answers the token with Cache-Control: no-store', async () => {
      const client = await start()
      const { headers } = await mint(client, { scopes: ['customers:read'] })
      expect(headers.get('cache-control')).toBe('no-store')
    })

    it('returns the secret once, and only a masked form to inspection', async () => {
      const client = await start()
      const { body } = await mint(client, { scopes: ['customers:read'] })
      const view = client.sandbox.tokens.get(body.id)
      expect(view).toMatchObject({ id: body.id, account_id: ACCOUNT_ONE })
      expect(view!.token).not.toContain(body.token)
      expect(view!.token).toContain('…')
      expect(JSON.stringify(client.sandbox.state())).not.toContain(body.token)
    })

    it('mints a different secret, long enough for 128 bits, every time', async () => {
      const client = await start()
      const secrets = new Set<string>()
      for (let i = 0; i < 5; i++) {
        const { body } = await mint(client, { scopes: ['customers:read'] })
        expect(body.token.length).toBeGreaterThanOrEqual(22)
        secrets.add(body.token)
      }
      expect(secrets.size).toBe(5)
    })

    for (const expiresIn of [60, 61, 600, 12_345, 86_400]) {
      it(`sets expires_at to created_at plus ${expiresIn} seconds`, async () => {
        const client = await start()
        const { status, body } = await mint(client, {
          scopes: ['customers:read'],
          expires_in: expiresIn,
        })
        expect(status).toBe(201)
        expect(body.expires_in).toBe(expiresIn)
        expect(body.created_at).toBe(NOW)
        expect(Date.parse(body.expires_at) - Date.parse(body.created_at)).toBe(
          expiresIn * 1000,
        )
      })
    }

    it('takes created_at from the sandbox clock', async () => {
      const client = await start()
      client.sandbox.clock.advance(90_000)
      const { body } = await mint(client, { scopes: ['customers:read'] })
      expect(body.created_at).toBe('2026-11-22T11:01:30.000Z')
      expect(body.expires_at).toBe('2026-11-22T12:01:30.000Z')
    })

    for (const value of [59, 86_401, 1.5, '60', 0, -60, null, true, 1e20]) {
      it(`returns 422 naming both bounds when expires_in is ${JSON.stringify(value)}`, async () => {
        const client = await start()
        const count = client.sandbox.tokens.list().length
        const result = await mint(client, {
          scopes: ['customers:read'],
          expires_in: value,
        })
        const error = expectFieldError(result, 'expires_in')
        expect(error.message).toMatch(/\b60\b/)
        expect(error.message).toMatch(/\b86400\b/)
        expect(result.body.detail).toMatch(/\b60\b.*\b86400\b/)
        expect(client.sandbox.tokens.list()).toHaveLength(count)
      })
    }

    it('returns 422 naming scopes when scopes is missing', async () => {
      const client = await start()
      const error = expectFieldError(
        await mint(client, { expires_in: 600 }),
        'scopes',
      )
      expect(error.code).toBe('required')
    })

    for (const value of [
      [],
      'customers:read',
      null,
      [1],
      [null],
      { 0: 'customers:read' },
    ]) {
      it(`returns 422 naming scopes when scopes is ${JSON.stringify(value)}`, async () => {
        const client = await start()
        expectFieldError(await mint(client, { scopes: value }), 'scopes')
      })
    }

    for (const scope of ['customers:delete', 'admin', 'Customers:Read', '']) {
      it(`returns 422 naming the scope ${JSON.stringify(scope)} when it is not in the catalog`, async () => {
        const client = await start()
        const result = await mint(client, {
          scopes: ['customers:read', scope],
        })
        const error = expectFieldError(result, 'scopes')
        expect(error.message).toContain(`"${scope}"`)
      })
    }

    it('returns 422 naming the scope that is listed twice', async () => {
      const client = await start()
      const result = await mint(client, {
        scopes: ['customers:read', 'tokens:write', 'customers:read'],
      })
      const error = expectFieldError(result, 'scopes')
      expect(error.message).toContain('customers:read')
      expect(error.message).not.toContain('tokens:write')
    })

    it('accepts every scope of the catalog at once', async () => {
      const client = await start()
      const scopes = ['customers:read', 'customers:write', 'tokens:write']
      const { status, body } = await mint(client, { scopes })
      expect(status).toBe(201)
      expect(body.scopes).toEqual(scopes)
    })

    it('accepts 20 distinct scopes and returns 422 naming scopes for 21', async () => {
      const catalog = Array.from({ length: 21 }, (_, i) => `res${i}:read`)
      const client = await start({ scopes: catalog })
      const twenty = await mint(client, { scopes: catalog.slice(0, 20) })
      expect(twenty.status).toBe(201)
      expect(twenty.body.scopes).toEqual(catalog.slice(0, 20))
      const error = expectFieldError(
        await mint(client, { scopes: catalog }),
        'scopes',
      )
      expect(error.message).toMatch(/20/)
    })

    it('reads a body sent with no Content-Type', async () => {
      const client = await start()
      const response = await client.fetch('/v2/tokens', {
        method: 'POST',
        headers: { authorization: `Bearer ${DEMO_KEY_ONE}` },
        body: new TextEncoder().encode('{"scopes":["customers:read"]}'),
      })
      expect(response.status).toBe(201)
      expect((await response.json()).scopes).toEqual(['customers:read'])
    })

    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      'text/plain;charset=UTF-8',
    ]) {
      it(`reads a body sent as ${type}`, async () => {
        const client = await start()
        const { status } = await mint(
          client,
          { scopes: ['customers:read'] },
          DEMO_KEY_ONE,
          { 'content-type': type },
        )
        expect(status).toBe(201)
      })
    }

    it('reads a string body that fetch sends as text/plain by itself', async () => {
      const client = await start()
      const response = await client.fetch('/v2/tokens', {
        method: 'POST',
        headers: { authorization: `Bearer ${DEMO_KEY_ONE}` },
        body: JSON.stringify({ scopes: ['customers:read'] }),
      })
      expect(response.status).toBe(201)
    })

    for (const type of [
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
    ]) {
      it(`returns 415 when the Content-Type is ${type}`, async () => {
        const client = await start()
        const { status, body } = await mint(
          client,
          { scopes: ['customers:read'] },
          DEMO_KEY_ONE,
          { 'content-type': type },
        )
        expect(status).toBe(415)
        expect(body.code).toBe('unsupported_media_type')
        expect(client.sandbox.tokens.list()).toHaveLength(0)
      })
    }

    it('lets a minted token with customers:write create a customer', async () => {
      const client = await start()
      const token = await mintToken(client, { scopes: ['customers:write'] })
      const { status, body } = await send(client, 'POST', '/v1/customers', {
        key: token,
        body: ada,
      })
      expect(status).toBe(201)
      expect(client.sandbox.customers.get(body.id)?.account_id).toBe(
        ACCOUNT_ONE,
      )
    })

    it("records a token minted with account two's key in account two", async () => {
      const client = await start()
      const { body } = await mint(
        client,
        { scopes: ['customers:read'] },
        DEMO_KEY_TWO,
      )
      expect(
        client.sandbox.tokens.list({ accountId: ACCOUNT_TWO }).map((t) => t.id),
      ).toEqual([body.id])
      expect(client.sandbox.tokens.list({ accountId: ACCOUNT_ONE })).toEqual([])
    })

    it('lets a token with tokens:write mint a token for a subset of its scopes', async () => {
      const client = await start()
      const parent = await mintToken(client, {
        scopes: ['customers:read', 'customers:write', 'tokens:write'],
      })
      const { status, body } = await mint(
        client,
        { scopes: ['customers:write'], expires_in: 600 },
        parent,
      )
      expect(status).toBe(201)
      expect(body.scopes).toEqual(['customers:write'])
      const created = await send(client, 'POST', '/v1/customers', {
        key: body.token,
        body: ada,
      })
      expect(created.status).toBe(201)
    })

    it('returns 403 insufficient_scope when a token asks for a scope it does not carry', async () => {
      const client = await start()
      const parent = await mintToken(client, {
        scopes: ['customers:read', 'tokens:write'],
      })
      const { status, body, headers } = await mint(
        client,
        { scopes: ['customers:read', 'customers:write'], expires_in: 600 },
        parent,
      )
      expect(status).toBe(403)
      expect(body.code).toBe('insufficient_scope')
      expect(body.detail).toContain('customers:write')
      expect(headers.get('www-authenticate')).toContain(
        'error="insufficient_scope"',
      )
      expect(client.sandbox.tokens.list()).toHaveLength(1)
    })

    it('lets a token mint one that ends exactly when it does', async () => {
      const client = await start()
      const parent = await mintToken(client, {
        scopes: ['customers:read', 'tokens:write'],
        expires_in: 600,
      })
      client.sandbox.clock.advance(100_000)
      const { status, body } = await mint(
        client,
        { scopes: ['customers:read'], expires_in: 500 },
        parent,
      )
      expect(status).toBe(201)
      expect(body.expires_at).toBe('2026-11-22T11:10:00.000Z')
    })

    it('returns 422 naming expires_in when a token asks for a token that outlives it', async () => {
      const client = await start()
      const parent = await mintToken(client, {
        scopes: ['customers:read', 'tokens:write'],
        expires_in: 600,
      })
      client.sandbox.clock.advance(100_000)
      const result = await mint(
        client,
        { scopes: ['customers:read'], expires_in: 501 },
        parent,
      )
      const error = expectFieldError(result, 'expires_in')
      expect(error.message).toContain('500')
      expect(client.sandbox.tokens.list()).toHaveLength(1)
    })

    it('ends a token minted by a token without expires_in no later than its parent', async () => {
      const client = await start()
      const parent = await mintToken(client, {
        scopes: ['customers:read', 'tokens:write'],
        expires_in: 600,
      })
      const { status, body } = await mint(
        client,
        { scopes: ['customers:read'] },
        parent,
      )
      expect(status).toBe(201)
      expect(body.expires_at).toBe('2026-11-22T11:10:00.000Z')
      expect(body.expires_in).toBe(600)
    })

    it('returns 403 with a tokens:write challenge when a token without tokens:write mints a token', async () => {
      const client = await start()
      const token = await mintToken(client, {
        scopes: ['customers:read', 'customers:write'],
      })
      const { status, body, headers } = await mint(
        client,
        { scopes: ['customers:read'] },
        token,
      )
      expect(status).toBe(403)
      expect(body.code).toBe('insufficient_scope')
      expect(headers.get('www-authenticate')).toContain('scope="tokens:write"')
      expect(headers.get('www-authenticate')).toBe(
        'Bearer realm="sandbox", error="insufficient_scope", scope="tokens:write"',
      )
    })

    it('mints from the catalog given in the scopes option', async () => {
      const client = await start({
        scopes: ['invoices:read', 'invoices:write', 'tokens:write'],
      })
      const ok = await mint(client, { scopes: ['invoices:read'] })
      expect(ok.status).toBe(201)
      expect(ok.body.scopes).toEqual(['invoices:read'])
      const result = await mint(client, { scopes: ['customers:read'] })
      const error = expectFieldError(result, 'scopes')
      expect(error.message).toContain('customers:read')
    })

    it('applies the default and the bounds of the expiresIn option and names them', async () => {
      const client = await start({
        expiresIn: { default: 120, min: 30, max: 600 },
      })
      const omitted = await mint(client, { scopes: ['customers:read'] })
      expect(omitted.body.expires_in).toBe(120)
      expect(omitted.body.expires_at).toBe('2026-11-22T11:02:00.000Z')
      for (const ok of [30, 600]) {
        const { status } = await mint(client, {
          scopes: ['customers:read'],
          expires_in: ok,
        })
        expect(status).toBe(201)
      }
      for (const bad of [29, 601]) {
        const error = expectFieldError(
          await mint(client, { scopes: ['customers:read'], expires_in: bad }),
          'expires_in',
        )
        expect(error.message).toMatch(/\b30\b.*\b600\b/)
      }
    })

    it('limits the number of scopes with the maxScopes option', async () => {
      const client = await start({ maxScopes: 2 })
      const two = await mint(client, {
        scopes: ['customers:read', 'customers:write'],
      })
      expect(two.status).toBe(201)
      const error = expectFieldError(
        await mint(client, {
          scopes: ['customers:read', 'customers:write', 'tokens:write'],
        }),
        'scopes',
      )
      expect(error.message).toMatch(/\b2\b/)
    })

    it('returns 403 when a token with tokens:write mints a token with tokenIssuers "api-keys"', async () => {
      const client = await start({ tokenIssuers: 'api-keys' })
      const parent = await mintToken(client, {
        scopes: ['customers:read', 'tokens:write'],
      })
      const { status, body, headers } = await mint(
        client,
        { scopes: ['customers:read'] },
        parent,
      )
      expect(status).toBe(403)
      expect(body.code).toBe('insufficient_scope')
      expect(headers.get('www-authenticate')).toContain('scope="tokens:write"')
      expect(client.sandbox.tokens.list()).toHaveLength(1)
    })
  })
}
