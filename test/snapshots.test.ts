import { afterEach, describe, expect, it } from 'vitest'
import { send, targets, type Client } from './_targets.ts'

const customer = (n: number) => ({
  name: `Customer ${n}`,
  email: `c${n}@example.com`,
})

for (const target of targets) {
  describe(target.name, () => {
    let client: Client
    afterEach(() => client?.close())

    it('restores a named snapshot through the JavaScript API: data and clock come back', async () => {
      client = await target.start({ seed: 1 })
      const { sandbox } = client
      sandbox.clock.set('2026-03-01T00:00:00Z')
      const kept = await send(client, 'POST', '/v1/customers', {
        body: customer(1),
      })
      const info = await sandbox.snapshot('before')
      expect(info).toMatchObject({
        name: 'before',
        customers: 51,
        created_at: '2026-03-01T00:00:00.000Z',
      })
      const dropped = await send(client, 'POST', '/v1/customers', {
        body: customer(2),
      })
      sandbox.clock.advance(3_600_000)
      await sandbox.restore('before')
      expect(sandbox.customers.get(kept.body.id)).toBeDefined()
      expect(sandbox.customers.get(dropped.body.id)).toBeUndefined()
      expect(sandbox.clock.now().toISOString()).toBe('2026-03-01T00:00:00.000Z')
      // The journal is kept across a restore.
      expect(sandbox.journal.list().map((e) => e.status)).toEqual([201, 201])
    })

    it('takes, lists and restores snapshots over /__sandbox/snapshots', async () => {
      client = await target.start({ seed: 1 })
      const token = await send(client, 'POST', '/v2/tokens', {
        body: { scopes: ['customers:write'] },
      })
      const taken = await send(client, 'POST', '/__sandbox/snapshots', {
        body: { name: 'fork' },
      })
      expect(taken.status).toBe(201)
      await send(client, 'POST', '/__sandbox/reset', { body: {} })
      expect(
        (
          await send(client, 'POST', '/v1/customers', {
            key: token.body.token,
            body: customer(1),
          })
        ).status,
      ).toBe(401)
      const list = await send(client, 'GET', '/__sandbox/snapshots')
      expect(list.body.snapshots.map((s: { name: string }) => s.name)).toEqual([
        'fork',
      ])
      const restored = await send(
        client,
        'POST',
        '/__sandbox/snapshots/restore',
        { body: { name: 'fork' } },
      )
      expect(restored.status).toBe(200)
      // The token minted before the snapshot works again.
      expect(
        (
          await send(client, 'POST', '/v1/customers', {
            key: token.body.token,
            body: customer(1),
          })
        ).status,
      ).toBe(201)
    })

    it('answers 404 for an unknown snapshot and 422 for a bad name, losing nothing', async () => {
      client = await target.start({ seed: 1 })
      const before = client.sandbox.customers.count()
      const unknown = await send(
        client,
        'POST',
        '/__sandbox/snapshots/restore',
        { body: { name: 'nope' } },
      )
      expect(unknown.status).toBe(404)
      expect(unknown.body.code).toBe('not_found')
      const bad = await send(client, 'POST', '/__sandbox/snapshots', {
        body: { name: 'has space' },
      })
      expect(bad.status).toBe(422)
      expect(client.sandbox.customers.count()).toBe(before)
      await expect(client.sandbox.restore('nope')).rejects.toThrow(
        /no snapshot|none by that name/,
      )
    })
  })
}
