import { afterEach, describe, expect, it } from 'vitest'
import { DEMO_KEY_TWO } from '../fixtures/demo-keys.ts'
import { send, targets, type Client } from './_targets.ts'

const body = { name: 'Ada', email: 'ada@example.com' }

for (const target of targets) {
  describe(target.name, () => {
    let client: Client
    afterEach(() => client?.close())

    it('sends no RateLimit headers and never 429 when rateLimit is off (the default)', async () => {
      client = await target.start({ seed: 1 })
      for (let i = 0; i < 5; i++) {
        const response = await send(client, 'POST', '/v1/customers', { body })
        expect(response.status).toBe(201)
        expect(response.headers.get('ratelimit')).toBeNull()
      }
    })

    it('answers 429 rate_limited with Retry-After and the IETF headers past the limit, per credential', async () => {
      client = await target.start({
        seed: 1,
        rateLimit: { limit: 2, windowSeconds: 60 },
      })
      client.sandbox.clock.set('2030-01-01T00:00:10Z')
      const first = await send(client, 'POST', '/v1/customers', { body })
      expect(first.headers.get('ratelimit-policy')).toBe('"default";q=2;w=60')
      expect(first.headers.get('ratelimit')).toBe('"default";r=1;t=50')
      expect(
        (await send(client, 'POST', '/v1/customers', { body })).status,
      ).toBe(201)
      const limited = await send(client, 'POST', '/v1/customers', { body })
      expect(limited.status).toBe(429)
      expect(limited.body.code).toBe('rate_limited')
      expect(limited.headers.get('retry-after')).toBe('50')
      expect(limited.headers.get('ratelimit')).toBe('"default";r=0;t=50')
      expect(
        (
          await send(client, 'POST', '/v1/customers', {
            key: DEMO_KEY_TWO,
            body,
          })
        ).status,
      ).toBe(201)
      client.sandbox.clock.advance(50_000)
      expect(
        (await send(client, 'POST', '/v1/customers', { body })).status,
      ).toBe(201)
    })

    it('counts before the scope check, so a limited token is told to wait, not that it lacks a scope', async () => {
      client = await target.start({
        seed: 1,
        rateLimit: { limit: 1, windowSeconds: 60 },
      })
      const token = await send(client, 'POST', '/v2/tokens', {
        body: { scopes: ['customers:read'] },
      })
      expect(
        (
          await send(client, 'POST', '/v1/customers', {
            key: token.body.token,
            body,
          })
        ).status,
      ).toBe(403)
      expect(
        (
          await send(client, 'POST', '/v1/customers', {
            key: token.body.token,
            body,
          })
        ).status,
      ).toBe(429)
    })
  })
}
