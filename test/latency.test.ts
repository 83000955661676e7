import { afterEach, describe, expect, it } from 'vitest'
import { send, targets, type Client } from './_targets.ts'

for (const target of targets) {
  describe(target.name, () => {
    let client: Client
    afterEach(() => client?.close())

    it('starts from the latency option and reports it over /__sandbox/latency', async () => {
      client = await target.start({ seed: 1, latency: { min: 1, max: 3 } })
      expect((await send(client, 'GET', '/__sandbox/latency')).body).toEqual({
        min_ms: 1,
        max_ms: 3,
      })
      expect(client.sandbox.scenarios.latency()).toEqual({ min: 1, max: 3 })
    })

    it('sets and removes the global latency over HTTP and the JavaScript API alike', async () => {
      client = await target.start({ seed: 1 })
      const set = await send(client, 'POST', '/__sandbox/latency', {
        body: { min_ms: 2, max_ms: 5 },
      })
      expect(set.body).toEqual({ min_ms: 2, max_ms: 5 })
      expect(client.sandbox.scenarios.latency()).toEqual({ min: 2, max: 5 })
      // Calls still answer correctly while the latency applies.
      const created = await send(client, 'POST', '/v1/customers', {
        body: { name: 'Ada', email: 'ada@example.com' },
      })
      expect(created.status).toBe(201)
      expect((await send(client, 'DELETE', '/__sandbox/latency')).body).toEqual(
        { min_ms: 0, max_ms: 0 },
      )
      client.sandbox.scenarios.latency({ min: 0, max: 1 })
      expect((await send(client, 'GET', '/__sandbox/latency')).body).toEqual({
        min_ms: 0,
        max_ms: 1,
      })
      await client.sandbox.reset()
      expect(client.sandbox.scenarios.latency()).toBe(false)
    })

    it('refuses an inverted or oversized range with 422 and keeps the old one', async () => {
      client = await target.start({ seed: 1, latency: { min: 1, max: 2 } })
      const inverted = await send(client, 'POST', '/__sandbox/latency', {
        body: { min_ms: 50, max_ms: 10 },
      })
      expect(inverted.status).toBe(422)
      const oversized = await send(client, 'POST', '/__sandbox/latency', {
        body: { min_ms: 0, max_ms: 60_001 },
      })
      expect(oversized.status).toBe(422)
      expect(client.sandbox.scenarios.latency()).toEqual({ min: 1, max: 2 })
      expect(() =>
        client.sandbox.scenarios.latency({ min: -1, max: 2 }),
      ).toThrow(RangeError)
    })
  })
}
