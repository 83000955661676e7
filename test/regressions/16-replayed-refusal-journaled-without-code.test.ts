import { expect, it } from 'vitest'
import { send, targets, useClients } from '../_targets.ts'

// A replayed refusal (an Idempotency-Key sent again after a 409
// email_taken) was journaled with `code: null`, as if it were a success,
// although the client got the same 409 email_taken again.

for (const target of targets) {
  const start = useClients(target)

  it(`journals a replayed 409 with its code (${target.name})`, async () => {
    const client = await start({ uniqueEmail: true })
    const body = { name: 'Ada', email: 'ada@example.com' }
    expect((await send(client, 'POST', '/v1/customers', { body })).status).toBe(
      201,
    )
    const headers = { 'idempotency-key': 'retry-1' }
    const first = await send(client, 'POST', '/v1/customers', { body, headers })
    const again = await send(client, 'POST', '/v1/customers', { body, headers })
    expect([first.status, first.body.code]).toEqual([409, 'email_taken'])
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.text).toBe(first.text)
    expect(
      client.sandbox.journal
        .list()
        .slice(0, 3)
        .map((entry) => [entry.status, entry.code, entry.replayed]),
    ).toEqual([
      [409, 'email_taken', true],
      [409, 'email_taken', false],
      [201, null, false],
    ])
  })

  it(`journals a replayed success with no code (${target.name})`, async () => {
    const client = await start()
    const body = { scopes: ['customers:read'] }
    const headers = { 'idempotency-key': 'retry-2' }
    await send(client, 'POST', '/v2/tokens', { body, headers })
    await send(client, 'POST', '/v2/tokens', { body, headers })
    expect(
      client.sandbox.journal
        .list()
        .slice(0, 2)
        .map((entry) => [entry.status, entry.code, entry.replayed]),
    ).toEqual([
      [201, null, true],
      [201, null, false],
    ])
  })
}
