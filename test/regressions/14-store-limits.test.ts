import { captureOutput } from '../_servers.ts'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE, DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'
import { main } from '../../src/cli/cli.ts'
import { createSandbox } from '../../src/index.ts'
import { inProcess, send, type Client } from '../_targets.ts'

const ada = { name: 'Ada Lovelace', email: 'ada@example.com' }
const ACCOUNT_ONE = 'acct_DemoAccount001'

const createCustomer = (
  client: Client,
  key = DEMO_KEY_ONE,
  headers: Record<string, string> = {},
) => send(client, 'POST', '/v1/customers', { key, body: ada, headers })

const expectLimit = (
  result: { status: number; body: any },
  option: string,
): void => {
  expect(result.status).toBe(409)
  expect(result.body.code).toBe('limit_reached')
  expect(result.body.detail).toContain(option)
}

it('returns 409 limit_reached naming limits.customersPerAccount when an account is full, stores nothing, and leaves the other account free', async () => {
  // The seed gives each demo account 25 customers.
  const client = await inProcess.start({
    limits: { customersPerAccount: 26 },
  })
  expect((await createCustomer(client)).status).toBe(201)
  const refused = await createCustomer(client)
  expectLimit(refused, 'limits.customersPerAccount')
  expect(refused.body.detail).toContain('--limits customersPerAccount=N')
  expect(client.sandbox.customers.count({ accountId: ACCOUNT_ONE })).toBe(26)
  expect((await createCustomer(client, DEMO_KEY_TWO)).status).toBe(201)
  const journal = client.sandbox.journal.list({ limit: 2 })
  expect(journal[1]).toMatchObject({ status: 409, code: 'limit_reached' })
})

it('returns 409 limit_reached naming limits.tokensPerAccount when an account holds that many tokens', async () => {
  const client = await inProcess.start({ limits: { tokensPerAccount: 2 } })
  const mint = (key: string) =>
    send(client, 'POST', '/v2/tokens', {
      key,
      body: { scopes: ['customers:read'] },
    })
  expect((await mint(DEMO_KEY_ONE)).status).toBe(201)
  expect((await mint(DEMO_KEY_ONE)).status).toBe(201)
  expectLimit(await mint(DEMO_KEY_ONE), 'limits.tokensPerAccount')
  expect(client.sandbox.tokens.list({ accountId: ACCOUNT_ONE })).toHaveLength(2)
  expect((await mint(DEMO_KEY_TWO)).status).toBe(201)
})

it('returns 409 limit_reached naming limits.records when the sandbox holds that many records in all', async () => {
  const probe = createSandbox({ seed: 1 })
  await probe.ready
  const data = probe.dump()
  const records =
    data.accounts.length +
    data.api_keys.length +
    data.customers.length +
    data.tokens.length
  const client = await inProcess.start({ limits: { records: records + 1 } })
  expect((await createCustomer(client)).status).toBe(201)
  expectLimit(await createCustomer(client, DEMO_KEY_TWO), 'limits.records')
  expectLimit(
    await send(client, 'POST', '/__sandbox/api-keys', { body: {} }),
    'limits.records',
  )
  expect(client.sandbox.customers.count()).toBe(data.customers.length + 1)
})

it('returns 409 limit_reached naming limits.accounts from POST /__sandbox/api-keys, and the JS API throws a RangeError', async () => {
  // Three fixture accounts, one more allowed.
  const client = await inProcess.start({ limits: { accounts: 4 } })
  const first = await send(client, 'POST', '/__sandbox/api-keys', { body: {} })
  expect(first.status).toBe(201)
  expectLimit(
    await send(client, 'POST', '/__sandbox/api-keys', { body: {} }),
    'limits.accounts',
  )
  await expect(client.sandbox.createApiKey()).rejects.toThrow(RangeError)
  expect(client.sandbox.accounts.list()).toHaveLength(4)
  // The new account works, and so do the others.
  expect((await createCustomer(client, first.body.api_key)).status).toBe(201)
  expect((await createCustomer(client)).status).toBe(201)
})

it('never passes limits.accounts with concurrent POST /__sandbox/api-keys', async () => {
  const client = await inProcess.start({ limits: { accounts: 10 } })
  const results = await Promise.all(
    Array.from({ length: 20 }, () =>
      send(client, 'POST', '/__sandbox/api-keys', { body: {} }),
    ),
  )
  expect(results.filter((r) => r.status === 201)).toHaveLength(7)
  expect(results.filter((r) => r.status === 409)).toHaveLength(13)
  expect(client.sandbox.accounts.list()).toHaveLength(10)
})

it('returns 409 limit_reached naming limits.scenarios once the queue is full, and sandbox.scenarios.next throws a RangeError', async () => {
  const client = await inProcess.start({ limits: { scenarios: 2 } })
  const queue = () =>
    send(client, 'POST', '/__sandbox/scenarios', {
      body: { operation: 'createCustomer', status: 503 },
    })
  expect((await queue()).status).toBe(201)
  expect((await queue()).status).toBe(201)
  expectLimit(await queue(), 'limits.scenarios')
  expect(() =>
    client.sandbox.scenarios.next('createToken', { status: 500 }),
  ).toThrow(RangeError)
  expect(client.sandbox.scenarios.list()).toHaveLength(2)
  // A queued scenario that runs makes room again.
  expect((await createCustomer(client)).status).toBe(503)
  expect((await queue()).status).toBe(201)
})

it('returns 409 limit_reached naming limits.snapshots for a new name, and still replaces a kept one', async () => {
  const client = await inProcess.start({ limits: { snapshots: 1 } })
  const take = (name: string) =>
    send(client, 'POST', '/__sandbox/snapshots', { body: { name } })
  expect((await take('one')).status).toBe(201)
  expectLimit(await take('two'), 'limits.snapshots')
  expect((await take('one')).status).toBe(201)
  expect(client.sandbox.snapshots().map((s) => s.name)).toEqual(['one'])
})

it("returns 409 naming idempotency.maxEntriesPerAccount for a new key when the account's keys are all live, never evicting one, and leaves the other account free", async () => {
  const client = await inProcess.start({
    idempotency: { maxEntriesPerAccount: 2, ttlSeconds: 60 },
  })
  client.sandbox.clock.set('2030-01-01T00:00:00Z')
  const withKey = (key: string, apiKey = DEMO_KEY_ONE) =>
    createCustomer(client, apiKey, { 'idempotency-key': key })
  const first = await withKey('order-1')
  expect(first.status).toBe(201)
  expect((await withKey('order-2')).status).toBe(201)
  const before = client.sandbox.customers.count({ accountId: ACCOUNT_ONE })
  expectLimit(await withKey('order-3'), 'idempotency.maxEntriesPerAccount')
  expect(client.sandbox.customers.count({ accountId: ACCOUNT_ONE })).toBe(
    before,
  )
  // The retry of the first request is still a replay, not a duplicate.
  const retry = await withKey('order-1')
  expect(retry.status).toBe(201)
  expect(retry.headers.get('idempotent-replayed')).toBe('true')
  expect(retry.body.id).toBe(first.body.id)
  expect((await withKey('order-9', DEMO_KEY_TWO)).status).toBe(201)
  // Once the window has passed, the account has room again.
  client.sandbox.clock.advance(60_000)
  expect((await withKey('order-3')).status).toBe(201)
})

it("returns 409 naming idempotency.maxEntries when the sandbox's keys are all live, and keeps every other account's keys", async () => {
  const client = await inProcess.start({ idempotency: { maxEntries: 2 } })
  const withKey = (key: string, apiKey = DEMO_KEY_ONE) =>
    createCustomer(client, apiKey, { 'idempotency-key': key })
  const first = await withKey('a')
  expect((await withKey('b')).status).toBe(201)
  expectLimit(await withKey('c', DEMO_KEY_TWO), 'idempotency.maxEntries')
  const retry = await withKey('a')
  expect(retry.headers.get('idempotent-replayed')).toBe('true')
  expect(retry.body.id).toBe(first.body.id)
})

it('takes --limits and --idempotency on the command line with the option names', async () => {
  const output = captureOutput()
  const { server, exitCode } = await main({
    args: [
      '--port',
      '0',
      '--quiet',
      '--limits',
      'customersPerAccount=26,accounts=3',
      '--idempotency',
      'maxEntriesPerAccount=5',
    ],
    stdout: output.stream,
    stderr: output.stream,
    env: { NO_COLOR: '1' },
  })
  try {
    expect(exitCode, output.text()).toBeUndefined()
    const post = (path: string, body: unknown) =>
      fetch(`${server!.url}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${DEMO_KEY_ONE}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify(body),
      })
    expect((await post('/v1/customers', ada)).status).toBe(201)
    const refused = await post('/v1/customers', ada)
    expect(refused.status).toBe(409)
    expect((await refused.json()).detail).toContain(
      'limits.customersPerAccount',
    )
    expect((await post('/__sandbox/api-keys', {})).status).toBe(409)
    expect(server!.sandbox.options.idempotency.maxEntriesPerAccount).toBe(5)
  } finally {
    await server?.close()
  }
})

it('exits 2 naming the flag when --limits has an unknown key or a bad number', async () => {
  for (const value of ['customers=5', 'records=many']) {
    const errors = captureOutput()
    const { exitCode } = await main({
      args: ['--port', '0', '--limits', value],
      stdout: errors.stream,
      stderr: errors.stream,
      env: {},
    })
    expect(exitCode).toBe(2)
    expect(errors.text()).toMatch(/--limits/)
  }
})
