import { afterEach, describe, expect, it } from 'vitest'
import { DEMO_KEY_TWO } from '../fixtures/demo-keys.ts'
import { send, targets, type Client } from './_targets.ts'

const body = { name: 'Ada', email: 'ada@example.com' }
const withKey = (key: string, extra: Record<string, string> = {}) => ({
  'idempotency-key': key,
  ...extra,
})

for (const target of targets) {
  describe(target.name, () => {
    let client: Client
    afterEach(() => client?.close())
    const start = async (options = {}) =>
      (client = await target.start({ seed: 1, ...options }))

    it('replays the first answer byte for byte with Idempotent-Replayed when the key and body repeat', async () => {
      await start()
      const first = await send(client, 'POST', '/v1/customers', {
        body,
        headers: withKey('k-1'),
      })
      const again = await send(client, 'POST', '/v1/customers', {
        body,
        headers: withKey('k-1'),
      })
      expect(first.status).toBe(201)
      expect(again.status).toBe(201)
      expect(again.text).toBe(first.text)
      expect(again.headers.get('idempotent-replayed')).toBe('true')
      expect(first.headers.get('idempotent-replayed')).toBeNull()
      expect(again.headers.get('x-request-id')).not.toBe(
        first.headers.get('x-request-id'),
      )
      expect(
        client.sandbox.customers.count({ accountId: 'acct_DemoAccount001' }),
      ).toBe(26)
      expect(client.sandbox.journal.last()?.replayed).toBe(true)
    })

    it('replays a token answer too, with the same secret', async () => {
      await start()
      const request = {
        body: { scopes: ['customers:read'] },
        headers: withKey('t-1'),
      }
      const first = await send(client, 'POST', '/v2/tokens', request)
      const again = await send(client, 'POST', '/v2/tokens', request)
      expect(again.body.token).toBe(first.body.token)
      expect(client.sandbox.tokens.list()).toHaveLength(1)
    })

    it('answers 422 idempotency_key_reused when the key comes back with another body', async () => {
      await start()
      await send(client, 'POST', '/v1/customers', {
        body,
        headers: withKey('k-2'),
      })
      const reused = await send(client, 'POST', '/v1/customers', {
        body: { ...body, name: 'Grace' },
        headers: withKey('k-2'),
      })
      expect(reused.status).toBe(422)
      expect(reused.body.code).toBe('idempotency_key_reused')
      expect(
        client.sandbox.customers.count({ accountId: 'acct_DemoAccount001' }),
      ).toBe(26)
    })

    it('answers 409 idempotency_in_progress while the first request is still being answered', async () => {
      await start()
      const first = send(client, 'POST', '/v1/customers', {
        body,
        headers: withKey('k-3', { 'x-sandbox-scenario': 'delay_ms=400' }),
      })
      // Let the first request claim the key before the second arrives.
      await new Promise((resolve) => setTimeout(resolve, 150))
      const second = await send(client, 'POST', '/v1/customers', {
        body,
        headers: withKey('k-3'),
      })
      expect(second.status).toBe(409)
      expect(second.body.code).toBe('idempotency_in_progress')
      expect((await first).status).toBe(201)
    })

    it('scopes keys to the account and the operation', async () => {
      await start()
      const one = await send(client, 'POST', '/v1/customers', {
        body,
        headers: withKey('shared'),
      })
      const two = await send(client, 'POST', '/v1/customers', {
        key: DEMO_KEY_TWO,
        body,
        headers: withKey('shared'),
      })
      expect(two.status).toBe(201)
      expect(two.body.id).not.toBe(one.body.id)
      const token = await send(client, 'POST', '/v2/tokens', {
        body: { scopes: ['customers:read'] },
        headers: withKey('shared'),
      })
      expect(token.status).toBe(201)
    })

    it('forgets a key after 24 hours of sandbox time', async () => {
      await start()
      client.sandbox.clock.set('2026-01-01T00:00:00Z')
      const first = await send(client, 'POST', '/v1/customers', {
        body,
        headers: withKey('k-4'),
      })
      client.sandbox.clock.advance(24 * 3600 * 1000)
      const later = await send(client, 'POST', '/v1/customers', {
        body,
        headers: withKey('k-4'),
      })
      expect(later.status).toBe(201)
      expect(later.body.id).not.toBe(first.body.id)
      expect(later.headers.get('idempotent-replayed')).toBeNull()
    })

    it('follows idempotency.ttlSeconds', async () => {
      await start({ idempotency: { ttlSeconds: 60 } })
      client.sandbox.clock.set('2026-01-01T00:00:00Z')
      await send(client, 'POST', '/v1/customers', {
        body,
        headers: withKey('k-5'),
      })
      client.sandbox.clock.advance(59_000)
      expect(
        (
          await send(client, 'POST', '/v1/customers', {
            body,
            headers: withKey('k-5'),
          })
        ).headers.get('idempotent-replayed'),
      ).toBe('true')
      client.sandbox.clock.advance(1_000)
      expect(
        (
          await send(client, 'POST', '/v1/customers', {
            body,
            headers: withKey('k-5'),
          })
        ).headers.get('idempotent-replayed'),
      ).toBeNull()
    })

    it('does not burn the key on a 422, so the corrected request can use it', async () => {
      await start()
      const bad = await send(client, 'POST', '/v1/customers', {
        body: { name: 'Ada' },
        headers: withKey('k-6'),
      })
      expect(bad.status).toBe(422)
      const good = await send(client, 'POST', '/v1/customers', {
        body,
        headers: withKey('k-6'),
      })
      expect(good.status).toBe(201)
    })

    it('refuses a malformed Idempotency-Key with 422 naming the header', async () => {
      await start()
      const long = await send(client, 'POST', '/v1/customers', {
        body,
        headers: withKey('x'.repeat(256)),
      })
      expect(long.status).toBe(422)
      expect(long.body.errors[0]).toMatchObject({
        field: 'Idempotency-Key',
        code: 'invalid_format',
      })
      const nonAscii = await send(client, 'POST', '/v1/customers', {
        body,
        headers: withKey('clé'),
      })
      expect(nonAscii.status).toBe(422)
      expect(
        client.sandbox.customers.count({ accountId: 'acct_DemoAccount001' }),
      ).toBe(25)
    })

    it('replays a 409 email_taken conflict as well', async () => {
      await start({ uniqueEmail: true })
      await send(client, 'POST', '/v1/customers', { body })
      const first = await send(client, 'POST', '/v1/customers', {
        body,
        headers: withKey('k-7'),
      })
      const again = await send(client, 'POST', '/v1/customers', {
        body,
        headers: withKey('k-7'),
      })
      expect(first.status).toBe(409)
      expect(again.text).toBe(first.text)
      expect(again.headers.get('idempotent-replayed')).toBe('true')
    })
  })
}
