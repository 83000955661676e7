import { expect, it } from 'vitest'
import { send, targets, useClients } from '../_targets.ts'

// The token record is sent with `Cache-Control: no-store` because it
// carries a secret (RFC 6749, section 5.1), but the two other answers that
// carry full secrets did not say so: a new API key from
// POST /__sandbox/api-keys and GET /__sandbox/export?secrets=include.

for (const target of targets) {
  const start = useClients(target)

  it(`marks every answer that carries a full secret no-store (${target.name})`, async () => {
    const client = await start()
    const minted = await send(client, 'POST', '/__sandbox/api-keys', {
      body: {},
    })
    expect(minted.status).toBe(201)
    expect(minted.headers.get('cache-control')).toBe('no-store')
    const full = await send(client, 'GET', '/__sandbox/export?secrets=include')
    expect(full.status).toBe(200)
    expect(full.headers.get('cache-control')).toBe('no-store')
    const masked = await send(client, 'GET', '/__sandbox/export')
    expect(masked.body.secrets).toBe('masked')
    const token = await send(client, 'POST', '/v2/tokens', {
      body: { scopes: ['customers:read'] },
    })
    expect(token.headers.get('cache-control')).toBe('no-store')
  })
}
