import { afterEach, expect, it } from 'vitest'
import { createSandbox } from '../src/index.ts'
import { inProcess, overHttp, postTo, send, type Client } from './_targets.ts'

const clients: Client[] = []
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close()
})

const call = postTo

const script = [
  ['/v1/customers', { name: 'Ada Lovelace', email: 'ada@example.com' }],
  [
    '/v2/tokens',
    { scopes: ['customers:read', 'customers:write'], expires_in: 600 },
  ],
  ['/v1/customers', { name: 'Grace Hopper', email: 'grace@example.com' }],
  ['/v1/customers', { name: '' }],
] as const

it('replays an exported session: the same requests get the same bodies', async () => {
  const original = createSandbox({ seed: 9, uniqueEmail: true })
  await original.ready
  original.clock.set('2026-05-01T10:00:00Z')
  for (const [path, body] of script) await call(original, path, body)
  const session = JSON.parse(JSON.stringify(original.export()))

  const replayed = createSandbox({ from: session })
  await replayed.ready
  expect(replayed.options.uniqueEmail).toBe(true)
  expect(replayed.state()).toEqual(original.state())
  expect(replayed.journal.list().map((e) => e.request_id)).toEqual(
    original.journal.list().map((e) => e.request_id),
  )

  const token = JSON.parse(
    (await call(original, '/v2/tokens', { scopes: ['customers:write'] })).text,
  ).token
  const again = await call(replayed, '/v2/tokens', {
    scopes: ['customers:write'],
  })
  expect(JSON.parse(again.text).token).toBe(token)
  for (const [path, body] of script) {
    expect(await call(replayed, path, body)).toEqual(
      await call(original, path, body),
    )
  }
  expect(
    await call(
      replayed,
      '/v1/customers',
      { name: 'T', email: 't@example.com' },
      token,
    ),
  ).toEqual(
    await call(
      original,
      '/v1/customers',
      { name: 'T', email: 't@example.com' },
      token,
    ),
  )
})

it('refuses a document that is not a session with a message that says what to pass', () => {
  expect(() => createSandbox({ from: { hello: 'world' } })).toThrow(
    /Failed to create a sandbox from a session: .*sandbox\.export\(\)/,
  )
})

it('lets options passed beside the session win over its own', async () => {
  const original = createSandbox({ seed: 3, uniqueEmail: true })
  await original.ready
  const replayed = createSandbox({
    from: original.export(),
    uniqueEmail: false,
  })
  await replayed.ready
  expect(replayed.options.uniqueEmail).toBe(false)
  expect(replayed.state().customers).toEqual(original.state().customers)
})

for (const target of [inProcess, overHttp]) {
  it(`exports the session over GET /__sandbox/export (${target.name})`, async () => {
    const client = await target.start({ seed: 4 })
    clients.push(client)
    client.sandbox.clock.set('2026-05-01T10:00:00Z')
    await send(client, 'POST', '/v1/customers', {
      body: { name: 'Ada', email: 'ada@example.com' },
    })
    const { status, body } = await send(
      client,
      'GET',
      '/__sandbox/export?secrets=include',
    )
    expect(status).toBe(200)
    expect(body).toMatchObject({
      format: 'customer-token-sandbox/session',
      version: 1,
      data: { seed: 4 },
    })
    const replayed = createSandbox({ from: body })
    await replayed.ready
    expect(replayed.customers.count()).toBe(client.sandbox.customers.count())
    expect(replayed.journal.last()?.path).toBe('/v1/customers')
  })
}
