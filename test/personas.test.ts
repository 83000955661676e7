import { afterEach, describe, expect, it } from 'vitest'
import {
  PERSONA_EXPIRED_TOKENS_KEY,
  PERSONA_RATE_LIMITED_KEY,
  PERSONA_READ_ONLY_KEY,
  PERSONA_SLOW_KEY,
  PERSONA_UNAVAILABLE_KEY,
} from '../fixtures/demo-keys.ts'
import { send, targets, type Client } from './_targets.ts'

const customer = { name: 'Ada Lovelace', email: 'ada@example.com' }

for (const target of targets) {
  describe(target.name, () => {
    let client: Client
    afterEach(() => client?.close())
    const start = async () => (client = await target.start({ seed: 1 }))

    it('answers every call of the unavailable persona with 503 simulated_failure and Retry-After', async () => {
      await start()
      for (const [method, path, body] of [
        ['POST', '/v1/customers', customer],
        ['POST', '/v2/tokens', { scopes: ['customers:read'] }],
      ] as const) {
        const response = await send(client, method, path, {
          key: PERSONA_UNAVAILABLE_KEY,
          body,
        })
        expect(response.status).toBe(503)
        expect(response.body.code).toBe('simulated_failure')
        expect(response.headers.get('retry-after')).toMatch(/^\d+$/)
      }
      expect(client.sandbox.journal.last()?.scenario).toBe(
        'persona=unavailable',
      )
    })

    it('lets the rate-limited persona make one call per minute of sandbox time, then 429', async () => {
      await start()
      client.sandbox.clock.set('2026-01-01T00:00:00Z')
      const first = await send(client, 'POST', '/v1/customers', {
        key: PERSONA_RATE_LIMITED_KEY,
        body: customer,
      })
      expect(first.status).toBe(201)
      const second = await send(client, 'POST', '/v1/customers', {
        key: PERSONA_RATE_LIMITED_KEY,
        body: customer,
      })
      expect(second.status).toBe(429)
      expect(second.body.code).toBe('rate_limited')
      expect(second.headers.get('retry-after')).toBe('60')
      expect(second.headers.get('ratelimit-policy')).toBe('"default";q=1;w=60')
      client.sandbox.clock.advance(60_000)
      const third = await send(client, 'POST', '/v1/customers', {
        key: PERSONA_RATE_LIMITED_KEY,
        body: customer,
      })
      expect(third.status).toBe(201)
    })

    it('mints already expired tokens for the expired-tokens persona', async () => {
      await start()
      const minted = await send(client, 'POST', '/v2/tokens', {
        key: PERSONA_EXPIRED_TOKENS_KEY,
        body: { scopes: ['customers:write'], expires_in: 3600 },
      })
      expect(minted.status).toBe(201)
      expect(minted.body.expires_at).toBe(minted.body.created_at)
      const used = await send(client, 'POST', '/v1/customers', {
        key: minted.body.token,
        body: customer,
      })
      expect(used.status).toBe(401)
      expect(used.body.code).toBe('token_expired')
      expect(used.headers.get('www-authenticate')).toContain(
        'error="invalid_token"',
      )
    })

    it('refuses customers:write to the read-only persona and to the tokens it mints', async () => {
      await start()
      const direct = await send(client, 'POST', '/v1/customers', {
        key: PERSONA_READ_ONLY_KEY,
        body: customer,
      })
      expect(direct.status).toBe(403)
      expect(direct.headers.get('www-authenticate')).toContain(
        'scope="customers:write"',
      )
      const escalate = await send(client, 'POST', '/v2/tokens', {
        key: PERSONA_READ_ONLY_KEY,
        body: { scopes: ['customers:write'] },
      })
      expect(escalate.status).toBe(403)
      const minted = await send(client, 'POST', '/v2/tokens', {
        key: PERSONA_READ_ONLY_KEY,
        body: { scopes: ['customers:read'] },
      })
      expect(minted.status).toBe(201)
      const used = await send(client, 'POST', '/v1/customers', {
        key: minted.body.token,
        body: customer,
      })
      expect(used.status).toBe(403)
      expect(used.body.code).toBe('insufficient_scope')
    })

    it("records the slow persona's delay and answers it correctly", async () => {
      await start()
      const response = await send(client, 'POST', '/v1/customers', {
        key: PERSONA_SLOW_KEY,
        body: customer,
      })
      expect(response.status).toBe(201)
      // The journal says the delay was applied; no timing is asserted.
      expect(client.sandbox.journal.last()?.scenario).toBe(
        'persona=slow; delay_ms=2000',
      )
    })
  })
}
