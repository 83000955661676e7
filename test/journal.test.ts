import { afterEach, describe, expect, it } from 'vitest'
import { send, targets, type Client } from './_targets.ts'

for (const target of targets) {
  describe(target.name, () => {
    let client: Client
    afterEach(() => client?.close())

    it('records 404 and 405 answers under the API, with the masked credential, but not /__sandbox/ calls', async () => {
      client = await target.start({ seed: 1 })
      await send(client, 'GET', '/v1/customers')
      await send(client, 'POST', '/v2/customers', { body: {} })
      await send(client, 'GET', '/__sandbox/state')
      const entries = client.sandbox.journal.list()
      expect(entries.map((e) => [e.method, e.path, e.status, e.code])).toEqual([
        ['POST', '/v2/customers', 404, 'not_found'],
        ['GET', '/v1/customers', 405, 'method_not_allowed'],
      ])
      expect(
        entries.every(
          (e) => e.credential === 'sk_test_…0001' && e.operation === null,
        ),
      ).toBe(true)
    })

    it('records the operation, account, replay and at of each call', async () => {
      client = await target.start({ seed: 1 })
      client.sandbox.clock.set('2030-01-01T00:00:00Z')
      const request = {
        body: { scopes: ['customers:read'] },
        headers: { 'idempotency-key': 'j-1' },
      }
      const minted = await send(client, 'POST', '/v2/tokens', request)
      await send(client, 'POST', '/v2/tokens', request)
      const [replay, first] = client.sandbox.journal.list()
      expect(first).toMatchObject({
        operation: 'createToken',
        status: 201,
        account_id: 'acct_DemoAccount001',
        replayed: false,
        at: '2030-01-01T00:00:00.000Z',
      })
      expect(first!.request_id).toBe(minted.headers.get('x-request-id'))
      expect(replay).toMatchObject({ replayed: true, status: 201 })
    })

    it('keeps only the newest journalLimit entries', async () => {
      client = await target.start({ seed: 1, journalLimit: 3 })
      for (let i = 0; i < 5; i++)
        await send(client, 'POST', '/v1/customers', {
          body: { name: `C${i}`, email: `c${i}@example.com` },
        })
      const entries = client.sandbox.journal.list()
      expect(entries).toHaveLength(3)
      expect(client.sandbox.journal.list({ limit: 2 })).toEqual(
        entries.slice(0, 2),
      )
      expect(client.sandbox.journal.last()).toEqual(entries[0])
      expect(client.sandbox.journal.size).toBe(3)
    })
  })
}
