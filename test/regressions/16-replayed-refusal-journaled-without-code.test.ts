import { readFile } from 'node:fs/promises'
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

// docs/reference/errors.md said "The X-Request-Id header repeats request_id", which a
// replay (its body the first answer's, byte for byte) cannot do; it now
// names the exception, and this pins what a replay carries.
it('replays the first request_id in the body and names this request in X-Request-Id and the journal', async () => {
  const client = await targets[0]!.start({ uniqueEmail: true })
  const body = { name: 'Ada', email: 'ada@example.com' }
  await send(client, 'POST', '/v1/customers', { body })
  const headers = { 'idempotency-key': 'retry-3' }
  const first = await send(client, 'POST', '/v1/customers', { body, headers })
  const again = await send(client, 'POST', '/v1/customers', { body, headers })
  expect(first.body.request_id).toBe(first.headers.get('x-request-id'))
  expect(again.body.request_id).toBe(first.body.request_id)
  expect(again.headers.get('x-request-id')).not.toBe(first.body.request_id)
  expect(client.sandbox.journal.last()?.request_id).toBe(
    again.headers.get('x-request-id'),
  )
  const catalogue = await readFile(
    new URL('../../docs/reference/errors.md', import.meta.url),
    'utf8',
  )
  expect(catalogue).toContain(
    'its `request_id` names the first request, and `X-Request-Id` this one',
  )
  await client.close()
})
