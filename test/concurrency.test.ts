import { afterEach, describe, expect, it } from 'vitest'
import { send, targets, type Client } from './_targets.ts'

for (const target of targets) {
  describe(target.name, () => {
    let client: Client
    afterEach(() => client?.close())

    it(
      'gives 1,000 concurrent creates 1,000 distinct ids and 1,000 records',
      { timeout: 30_000 },
      async () => {
        client = await target.start({ seed: 1, customersPerAccount: 0 })
        const responses = await Promise.all(
          Array.from({ length: 1000 }, (_, i) =>
            send(client, 'POST', '/v1/customers', {
              body: { name: `C ${i}`, email: `c${i}@example.com` },
            }),
          ),
        )
        expect(responses.every((r) => r.status === 201)).toBe(true)
        const ids = new Set(responses.map((r) => r.body.id))
        expect(ids.size).toBe(1000)
        expect(client.sandbox.customers.count()).toBe(1000)
        for (const id of ids)
          expect(client.sandbox.customers.get(id)).toBeDefined()
      },
    )

    it(
      'creates exactly one record for 100 concurrent retries with one Idempotency-Key',
      { timeout: 30_000 },
      async () => {
        client = await target.start({ seed: 1, customersPerAccount: 0 })
        const body = { name: 'Ada', email: 'ada@example.com' }
        const responses = await Promise.all(
          Array.from({ length: 100 }, () =>
            send(client, 'POST', '/v1/customers', {
              body,
              headers: { 'idempotency-key': 'retry-storm' },
            }),
          ),
        )
        const statuses = responses.map((r) => r.status)
        expect(statuses.every((s) => s === 201 || s === 409)).toBe(true)
        const created = responses.filter((r) => r.status === 201)
        expect(new Set(created.map((r) => r.body.id)).size).toBe(1)
        const replays = created.filter(
          (r) => r.headers.get('idempotent-replayed') === 'true',
        )
        expect(replays.length).toBe(created.length - 1)
        for (const conflict of responses.filter((r) => r.status === 409)) {
          expect(conflict.body.code).toBe('idempotency_in_progress')
        }
        expect(client.sandbox.customers.count()).toBe(1)
      },
    )
  })
}
