// Runs once: every server here names its own store.
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import { createSandbox } from '../src/index.ts'
import { startServer, tempFolder } from './_servers.ts'
import { send, targets, type Client } from './_targets.ts'

const customer = { name: 'Ada', email: 'ada@example.com' }

/** `POST /v1/customers` through `sandbox.fetch` with `credential`. */
const createCustomer = (
  sandbox: ReturnType<typeof createSandbox>,
  credential: string,
) =>
  sandbox.fetch(
    new Request('http://x.test/v1/customers', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${credential}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify(customer),
    }),
  )

describe('account controls: JavaScript API', () => {
  it("gives an account its own clock: its tokens' created_at and expiry follow it, others and the sandbox clock do not move", async () => {
    const sandbox = createSandbox({ seed: 1 })
    await sandbox.ready
    sandbox.clock.set('2030-01-01T00:00:00Z')
    const a = await sandbox.createApiKey({ accountName: 'A' })
    const b = await sandbox.createApiKey({ accountName: 'B' })
    const mint = (key: string) =>
      sandbox.fetch(
        new Request('http://x.test/v2/tokens', {
          method: 'POST',
          headers: { authorization: `Bearer ${key}` },
          body: JSON.stringify({ scopes: ['customers:write'], expires_in: 60 }),
        }),
      )
    const tokenA = await (await mint(a.apiKey)).json()
    const tokenB = await (await mint(b.apiKey)).json()

    const account = sandbox.account(a.accountId)
    expect(account.clock.own).toBe(false)
    expect(account.clock.advance(60_000).toISOString()).toBe(
      '2030-01-01T00:01:00.000Z',
    )
    expect(account.clock.own).toBe(true)
    expect(sandbox.account(a.apiKey).clock.now().toISOString()).toBe(
      '2030-01-01T00:01:00.000Z',
    )
    expect(sandbox.clock.now().toISOString()).toBe('2030-01-01T00:00:00.000Z')
    expect(sandbox.account(b.accountId).clock.now().toISOString()).toBe(
      '2030-01-01T00:00:00.000Z',
    )

    const create = (token: string) => createCustomer(sandbox, token)
    const expired = await create(tokenA.token)
    expect(expired.status).toBe(401)
    expect((await expired.json()).code).toBe('token_expired')
    expect((await create(tokenB.token)).status).toBe(201)
    expect(
      sandbox.tokens.list().map((token) => [token.account_id, token.expired]),
    ).toEqual([
      [a.accountId, true],
      [b.accountId, false],
    ])

    // created_at of what the account creates, and its journal times.
    const fresh = await (await mint(a.apiKey)).json()
    expect(fresh.created_at).toBe('2030-01-01T00:01:00.000Z')
    expect(account.journal.last()?.at).toBe('2030-01-01T00:01:00.000Z')

    // Back to the sandbox clock, which it follows from then on.
    account.clock.reset()
    expect(account.clock.own).toBe(false)
    sandbox.clock.advance(120_000)
    expect(account.clock.now().toISOString()).toBe('2030-01-01T00:02:00.000Z')
  })

  it('an account without a clock of its own follows the sandbox clock, and one with it does not', async () => {
    const sandbox = createSandbox({ seed: 1 })
    await sandbox.ready
    sandbox.clock.set('2030-01-01T00:00:00Z')
    const a = await sandbox.createApiKey()
    const b = await sandbox.createApiKey()
    sandbox.account(a.accountId).clock.set('2031-01-01T00:00:00Z')
    sandbox.clock.advance(3_600_000)
    expect(sandbox.account(a.accountId).clock.now().toISOString()).toBe(
      '2031-01-01T00:00:00.000Z',
    )
    expect(sandbox.account(b.accountId).clock.now().toISOString()).toBe(
      '2030-01-01T01:00:00.000Z',
    )
    // A move out of range throws and leaves the account as it was.
    expect(() => sandbox.account(b.accountId).clock.advance(1e20)).toThrow(
      RangeError,
    )
    expect(sandbox.account(b.accountId).clock.own).toBe(false)
  })

  it("queues faults that only the account's own requests consume, before the sandbox-wide queue", async () => {
    const sandbox = createSandbox({ seed: 1 })
    await sandbox.ready
    const a = await sandbox.createApiKey()
    const b = await sandbox.createApiKey()
    const create = async (key: string) =>
      (await createCustomer(sandbox, key)).status
    sandbox.account(a.accountId).scenarios.next('createCustomer', {
      status: 503,
      times: 2,
    })
    sandbox.scenarios.next('createCustomer', { status: 500 })
    expect(sandbox.account(a.accountId).scenarios.list()).toHaveLength(1)
    expect(sandbox.account(b.accountId).scenarios.list()).toEqual([])
    // B takes the sandbox-wide fault, never A's.
    expect(await create(b.apiKey)).toBe(500)
    expect(await create(b.apiKey)).toBe(201)
    expect(await create(a.apiKey)).toBe(503)
    expect(await create(a.apiKey)).toBe(503)
    expect(await create(a.apiKey)).toBe(201)
    expect(sandbox.account(a.accountId).scenarios.list()).toEqual([])
  })

  it('shows each account only its own exchanges, and clearing one view leaves the journal and other views alone', async () => {
    const sandbox = createSandbox({ seed: 1 })
    await sandbox.ready
    const a = await sandbox.createApiKey()
    const b = await sandbox.createApiKey()
    const create = (key: string) => createCustomer(sandbox, key)
    await create(a.apiKey)
    await create(b.apiKey)
    await create(a.apiKey)
    const viewA = sandbox.account(a.accountId).journal
    expect(viewA.list().map((entry) => entry.account_id)).toEqual([
      a.accountId,
      a.accountId,
    ])
    expect(viewA.size).toBe(2)
    expect(viewA.list({ limit: 1 })).toHaveLength(1)
    viewA.clear()
    expect(viewA.list()).toEqual([])
    expect(sandbox.account(b.accountId).journal.size).toBe(1)
    expect(sandbox.journal.size).toBe(3)
    await create(a.apiKey)
    expect(viewA.size).toBe(1)
  })

  it('reset forgets every account control; dump and load keep the account clocks', async () => {
    const sandbox = createSandbox({ seed: 1 })
    await sandbox.ready
    const one = sandbox.account(DEMO_KEY_ONE)
    one.clock.set('2040-05-05T00:00:00Z')
    one.scenarios.next('*', { status: 503 })
    const data = sandbox.dump()
    expect(data.account_clocks).toEqual([
      {
        account_id: one.accountId,
        now: '2040-05-05T00:00:00.000Z',
        frozen: true,
      },
    ])
    await sandbox.reset()
    expect(one.clock.own).toBe(false)
    expect(one.scenarios.list()).toEqual([])
    expect(sandbox.dump()).not.toHaveProperty('account_clocks')

    const other = createSandbox({ seed: 1 })
    await other.load(data)
    expect(other.account(one.accountId).clock.now().toISOString()).toBe(
      '2040-05-05T00:00:00.000Z',
    )
  })

  it("keeps an account's clock set over HTTP in the data file across a restart", async () => {
    const folder = await tempFolder('sandbox-account-clock-')
    const dataFile = join(folder, 'sandbox.jsonl')
    const first = await startServer({ dataFile })
    const moved = await fetch(`${first.url}/__sandbox/account/clock`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEMO_KEY_ONE}` },
      body: JSON.stringify({ now: '2035-03-03T00:00:00Z' }),
    })
    expect(moved.status).toBe(200)
    await first.close()
    const second = await startServer({ dataFile })
    const clock = await fetch(`${second.url}/__sandbox/account/clock`, {
      headers: { authorization: `Bearer ${DEMO_KEY_ONE}` },
    })
    expect(await clock.json()).toMatchObject({
      now: '2035-03-03T00:00:00.000Z',
      own: true,
    })
  })

  it('bounds the account queues by limits.scenarios in all, and refuses an unknown account', async () => {
    const sandbox = createSandbox({ seed: 1, limits: { scenarios: 2 } })
    await sandbox.ready
    const a = await sandbox.createApiKey()
    const b = await sandbox.createApiKey()
    sandbox.account(a.accountId).scenarios.next('*', { status: 503 })
    sandbox.account(b.accountId).scenarios.next('*', { status: 503 })
    expect(() =>
      sandbox.account(b.accountId).scenarios.next('*', { status: 503 }),
    ).toThrow(/limits\.scenarios \(2\)/)
    // The sandbox-wide queue keeps its own room, as before.
    expect(sandbox.scenarios.next('*', { status: 503 }).remaining).toBe(1)
    expect(() => sandbox.account('acct_nope')).toThrow(
      /neither an account id nor an API key/,
    )
  })
})

for (const target of targets) {
  describe(`account controls over HTTP: ${target.name}`, () => {
    let client: Client
    afterEach(() => client?.close())

    const mintAccount = async () => {
      const { status, body } = await send(client, 'POST', '/__sandbox/api-keys')
      expect(status).toBe(201)
      return body as { api_key: string; account_id: string }
    }

    it("moves one account's clock, queues its faults and reads its journal with its own key; the other account and the global controls see nothing of it", async () => {
      client = await target.start({ seed: 1 })
      await send(client, 'POST', '/__sandbox/clock', {
        body: { now: '2030-01-01T00:00:00Z' },
      })
      const a = await mintAccount()
      const b = await mintAccount()

      const moved = await send(client, 'POST', '/__sandbox/account/clock', {
        key: a.api_key,
        body: { advance_seconds: 7200 },
      })
      expect(moved.status).toBe(200)
      expect(moved.body).toEqual({
        account_id: a.account_id,
        now: '2030-01-01T02:00:00.000Z',
        frozen: true,
        own: true,
      })
      expect(
        (
          await send(client, 'GET', '/__sandbox/account/clock', {
            key: b.api_key,
          })
        ).body,
      ).toEqual({
        account_id: b.account_id,
        now: '2030-01-01T00:00:00.000Z',
        frozen: true,
        own: false,
      })
      expect((await send(client, 'GET', '/__sandbox/clock')).body.now).toBe(
        '2030-01-01T00:00:00.000Z',
      )

      const queued = await send(
        client,
        'POST',
        '/__sandbox/account/scenarios',
        {
          key: a.api_key,
          body: { operation: 'createToken', status: 502 },
        },
      )
      expect(queued.status).toBe(201)
      expect(queued.body).toMatchObject({
        operation: 'createToken',
        status: 502,
      })
      expect(
        (await send(client, 'GET', '/__sandbox/scenarios')).body.scenarios,
      ).toEqual([])

      const mint = (key: string) =>
        send(client, 'POST', '/v2/tokens', {
          key,
          body: { scopes: ['customers:read'], expires_in: 600 },
        })
      const tokenB = await mint(b.api_key)
      expect(tokenB.status).toBe(201)
      expect(tokenB.body.created_at).toBe('2030-01-01T00:00:00.000Z')
      const failedA = await mint(a.api_key)
      expect(failedA.status).toBe(502)
      expect(failedA.body.code).toBe('simulated_failure')
      const tokenA = await mint(a.api_key)
      expect(tokenA.body.created_at).toBe('2030-01-01T02:00:00.000Z')
      expect(tokenA.body.expires_at).toBe('2030-01-01T02:10:00.000Z')

      const journalA = await send(
        client,
        'GET',
        '/__sandbox/account/requests',
        {
          key: a.api_key,
        },
      )
      expect(
        journalA.body.requests.map((entry: any) => [
          entry.account_id,
          entry.status,
          entry.at,
        ]),
      ).toEqual([
        [a.account_id, 201, '2030-01-01T02:00:00.000Z'],
        [a.account_id, 502, '2030-01-01T02:00:00.000Z'],
      ])
      const limited = await send(
        client,
        'GET',
        '/__sandbox/account/requests?limit=1',
        { key: b.api_key },
      )
      expect(limited.body.requests).toHaveLength(1)
      expect(limited.body.requests[0].account_id).toBe(b.account_id)

      expect(
        (
          await send(client, 'DELETE', '/__sandbox/account/requests', {
            key: a.api_key,
          })
        ).status,
      ).toBe(204)
      expect(
        (
          await send(client, 'GET', '/__sandbox/account/requests', {
            key: a.api_key,
          })
        ).body.requests,
      ).toEqual([])
      expect(
        (await send(client, 'GET', '/__sandbox/requests')).body.requests,
      ).toHaveLength(3)

      const dropped = await send(client, 'DELETE', '/__sandbox/account/clock', {
        key: a.api_key,
      })
      expect(dropped.body).toMatchObject({
        now: '2030-01-01T00:00:00.000Z',
        own: false,
      })
    })

    it('refuses a missing key, an unknown key, a token and a bad body with problems that say why', async () => {
      client = await target.start({ seed: 1 })
      const missing = await send(client, 'GET', '/__sandbox/account/clock', {
        key: null,
      })
      expect(missing.status).toBe(401)
      expect(missing.body.code).toBe('missing_credentials')
      const unknown = await send(client, 'GET', '/__sandbox/account/clock', {
        key: 'sk_test_000000000000000000000000',
      })
      expect(unknown.status).toBe(401)
      expect(unknown.body.code).toBe('invalid_credentials')
      const token = await send(client, 'POST', '/v2/tokens', {
        body: { scopes: ['customers:read'] },
      })
      const withToken = await send(client, 'POST', '/__sandbox/account/clock', {
        key: token.body.token,
        body: { advance_seconds: 60 },
      })
      expect(withToken.status).toBe(403)
      expect(withToken.body.detail).toMatch(/API keys, not a token/)
      expect(client.sandbox.account(DEMO_KEY_ONE).clock.own).toBe(false)
      const bad = await send(client, 'POST', '/__sandbox/account/clock', {
        body: { advance_seconds: 1.5 },
      })
      expect(bad.status).toBe(422)
      const far = await send(client, 'POST', '/__sandbox/account/clock', {
        body: { now: '9999-12-31T23:00:00Z' },
      })
      expect(far.status).toBe(200)
      const beyond = await send(client, 'POST', '/__sandbox/account/clock', {
        body: { advance_seconds: 7200 },
      })
      expect(beyond.status).toBe(422)
      expect(beyond.body.code).toBe('out_of_range')
      const badScenario = await send(
        client,
        'POST',
        '/__sandbox/account/scenarios',
        { body: { operation: 'createToken' } },
      )
      expect(badScenario.status).toBe(422)
      expect(client.sandbox.account(DEMO_KEY_ONE).scenarios.list()).toEqual([])
    })

    it("takes the account's API key where the sandbox-wide surface needs the admin token", async () => {
      client = await target.start({ seed: 1, adminToken: 'admin-secret-1234' })
      const global = await send(client, 'POST', '/__sandbox/clock', {
        body: { advance_seconds: 60 },
      })
      expect(global.status).toBe(401)
      const own = await send(client, 'POST', '/__sandbox/account/clock', {
        body: { advance_seconds: 60 },
      })
      expect(own.status).toBe(200)
      expect(own.body.own).toBe(true)
      const asAdmin = await send(client, 'GET', '/__sandbox/account/clock', {
        key: 'admin-secret-1234',
      })
      expect(asAdmin.status).toBe(401)
    })
  })
}
