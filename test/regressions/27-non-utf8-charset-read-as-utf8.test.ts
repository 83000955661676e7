import { describe, expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../src/fixtures.ts'
import { targets, type Client, useClients } from '../_targets.ts'

// `Content-Type: application/json; charset=utf-16` was accepted, and the
// body read as UTF-8.

const post = async (client: Client, path: string, type: string) => {
  const response = await client.fetch(path, {
    method: 'POST',
    headers: { authorization: `Bearer ${DEMO_KEY_ONE}`, 'content-type': type },
    body: JSON.stringify(
      path === '/v1/customers'
        ? { name: 'Ada', email: 'ada@example.com' }
        : { scopes: ['customers:read'] },
    ),
  })
  return {
    status: response.status,
    body: (await response.json()) as { code?: string; detail?: string },
  }
}

for (const target of targets) {
  describe(target.name, () => {
    const start = useClients(target)

    it.each([
      ['/v1/customers', 'application/json; charset=utf-16', 'utf-16'],
      ['/v1/customers', 'application/json;CHARSET="ISO-8859-1"', 'ISO-8859-1'],
      ['/v2/tokens', 'text/plain; charset=us-ascii', 'us-ascii'],
    ])(
      'refuses POST %s with %s with a 415 naming the charset',
      async (path, type, charset) => {
        const client = await start()
        const { status, body } = await post(client, path, type)
        expect(status).toBe(415)
        expect(body.code).toBe('unsupported_media_type')
        expect(body.detail).toContain(`charset=${charset}`)
      },
    )

    it.each([
      'application/json; charset=UTF-8',
      'application/json;charset="utf8"',
      'application/json',
    ])('takes a body sent as %s', async (type) => {
      const client = await start()
      const { status } = await post(client, '/v1/customers', type)
      expect(status).toBe(201)
    })
  })
}
