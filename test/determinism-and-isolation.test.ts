import { expect, it } from 'vitest'
import { DEMO_KEY_TWO } from '../fixtures/demo-keys.ts'
import {
  createSandbox,
  type Sandbox,
  type SandboxOptions,
} from '../src/index.ts'
import { postTo } from './_targets.ts'

const start = async (options: SandboxOptions = {}): Promise<Sandbox> => {
  const sandbox = createSandbox({ seed: 1, ...options })
  await sandbox.ready
  sandbox.clock.set('2030-01-01T00:00:00Z')
  return sandbox
}

const post = postTo

const seeded = (sandbox: Sandbox) =>
  sandbox.customers
    .list()
    .map(({ id, name, email, account_id }) => ({ id, name, email, account_id }))

it('gives the same seed the same seeded data, and the same created ids and secrets', async () => {
  const [a, b] = await Promise.all([start({ seed: 7 }), start({ seed: 7 })])
  expect(seeded(a)).toEqual(seeded(b))
  for (const sandbox of [a, b]) expect(sandbox.customers.count()).toBe(50)
  const customer = { name: 'Ada', email: 'ada@example.com' }
  expect(await post(a, '/v1/customers', customer)).toEqual(
    await post(b, '/v1/customers', customer),
  )
  const token = { scopes: ['customers:read'] }
  expect(await post(a, '/v2/tokens', token)).toEqual(
    await post(b, '/v2/tokens', token),
  )
})

it('gives another seed other seeded customers', async () => {
  const [a, b] = await Promise.all([start({ seed: 1 }), start({ seed: 2 })])
  expect(seeded(a).map((c) => c.email)).not.toEqual(
    seeded(b).map((c) => c.email),
  )
})

it('draws created ids and secrets at random with deterministic: false, keeping the seeded data', async () => {
  const [a, b] = await Promise.all([
    start({ deterministic: false }),
    start({ deterministic: false }),
  ])
  expect(seeded(a)).toEqual(seeded(b))
  const customer = { name: 'Ada', email: 'ada@example.com' }
  expect((await post(a, '/v1/customers', customer)).body.id).not.toBe(
    (await post(b, '/v1/customers', customer)).body.id,
  )
  const token = { scopes: ['customers:read'] }
  expect((await post(a, '/v2/tokens', token)).body.token).not.toBe(
    (await post(b, '/v2/tokens', token)).body.token,
  )
})

it('switches the seed with reset(seed) and restores the data with reset()', async () => {
  const sandbox = await start()
  const original = seeded(sandbox)
  const created = await post(sandbox, '/v1/customers', {
    name: 'Ada',
    email: 'ada@example.com',
  })
  sandbox.scenarios.next('createCustomer', { status: 503 })
  await sandbox.reset(5)
  expect(sandbox.seed).toBe(5)
  expect(seeded(sandbox)).not.toEqual(original)
  await sandbox.reset(1)
  expect(seeded(sandbox)).toEqual(original)
  expect(sandbox.customers.get(created.body.id)).toBeUndefined()
  expect(sandbox.journal.list()).toEqual([])
  expect(sandbox.scenarios.list()).toEqual([])
  expect(sandbox.clock.frozen).toBe(false)
  await expect(async () => sandbox.reset(-1)).rejects.toThrow(RangeError)
})

it('makes 2,000 distinct customer ids', { timeout: 30_000 }, async () => {
  const sandbox = await start({ customersPerAccount: 0 })
  const ids = new Set<string>()
  for (let i = 0; i < 2000; i++)
    ids.add(
      (
        await post(sandbox, '/v1/customers', {
          name: `C${i}`,
          email: `c${i}@example.com`,
        })
      ).body.id,
    )
  expect(ids.size).toBe(2000)
})

it('shares nothing between two sandboxes in one process', async () => {
  const [a, b] = await Promise.all([start(), start()])
  const created = await post(a, '/v1/customers', {
    name: 'Ada',
    email: 'ada@example.com',
  })
  const { apiKey } = await a.createApiKey({ accountName: 'Only in A' })
  a.scenarios.next('createToken', { status: 503 })
  a.clock.set('2040-01-01T00:00:00Z')
  const minted = await post(
    a,
    '/v1/customers',
    { name: 'K', email: 'k@example.com' },
    apiKey,
  )
  expect(minted.status).toBe(201)
  expect(b.customers.get(created.body.id)).toBeUndefined()
  expect(b.journal.list()).toEqual([])
  expect(b.scenarios.list()).toEqual([])
  expect(b.clock.now().toISOString()).toBe('2030-01-01T00:00:00.000Z')
  const unknown = await post(
    b,
    '/v1/customers',
    { name: 'K', email: 'k@example.com' },
    apiKey,
  )
  expect(unknown.status).toBe(401)
  expect(unknown.body.code).toBe('invalid_credentials')
  expect(b.accounts.list().map((acc) => acc.name)).not.toContain('Only in A')
})

it('keeps each account to its own customers', async () => {
  const sandbox = await start()
  const one = await post(sandbox, '/v1/customers', {
    name: 'One',
    email: 'one@example.com',
  })
  const two = await post(
    sandbox,
    '/v1/customers',
    { name: 'Two', email: 'two@example.com' },
    DEMO_KEY_TWO,
  )
  const ids = (accountId: string) =>
    sandbox.customers.list({ accountId }).map((c) => c.id)
  expect(ids('acct_DemoAccount001')).toContain(one.body.id)
  expect(ids('acct_DemoAccount001')).not.toContain(two.body.id)
  expect(ids('acct_DemoAccount002')).toContain(two.body.id)
  expect(ids('acct_DemoAccount002')).not.toContain(one.body.id)
})
