import { afterEach, beforeEach, expect, it, vi } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import {
  DEMO_KEY_ONE,
  DEMO_KEY_TWO,
  PERSONA_READ_ONLY_KEY,
} from '../../fixtures/demo-keys.ts'

// What the API answers after sandbox.db changed a record must follow what
// the collections hold: a credential updated and then deleted, a failed
// update, clear(), and records sharing an id or a secret went out of step.

const ACCOUNT = 'acct_DemoAccount001'
const KEY = 'sk_test_SeededKeyThroughTheModel01'

// @msw/data prints a refused record's schema issues with console.error.
beforeEach(() => {
  vi.spyOn(console, 'error').mockImplementation(() => {})
})
afterEach(() => {
  vi.restoreAllMocks()
})

const createCustomer = async (
  sandbox: ReturnType<typeof createSandbox>,
  credential: string,
  email = 'ada@example.com',
) => {
  const response = await sandbox.fetch(
    new Request('http://api.test/v1/customers', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${credential}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name: 'Ada', email }),
    }),
  )
  return { status: response.status, body: await response.json() }
}

const seedKey = (
  sandbox: ReturnType<typeof createSandbox>,
  id = 'key_seeded',
) =>
  sandbox.db.apiKeys.create({
    id,
    account_id: ACCOUNT,
    secret: KEY,
    revoked: false,
    created_at: new Date().toISOString(),
  })

it('refuses an API key deleted through sandbox.db after an update of it', async () => {
  const sandbox = createSandbox({ seed: 1 })
  await sandbox.ready
  await seedKey(sandbox)
  expect((await createCustomer(sandbox, KEY)).status).toBe(201)

  await sandbox.db.apiKeys.update((q) => q.where({ id: 'key_seeded' }), {
    data(key) {
      key.created_at = new Date(0).toISOString()
    },
  })
  expect((await createCustomer(sandbox, KEY)).status).toBe(201)
  sandbox.db.apiKeys.delete((q) => q.where({ id: 'key_seeded' }))

  expect(sandbox.db.apiKeys.findFirst((q) => q.where({ secret: KEY }))).toBe(
    undefined,
  )
  const refused = await createCustomer(sandbox, KEY)
  expect(refused.status).toBe(401)
  expect(refused.body.code).toBe('invalid_credentials')
})

it('keeps the old secret working when an update through sandbox.db is refused by the schema', async () => {
  const sandbox = createSandbox({ seed: 1 })
  await sandbox.ready
  await expect(
    sandbox.db.apiKeys.update((q) => q.where({ secret: DEMO_KEY_ONE }), {
      data(key) {
        key.secret = KEY
        key.created_at = 'not a date'
      },
    }),
  ).rejects.toThrow(/does not match the schema/)

  expect(
    sandbox.db.apiKeys.findFirst((q) => q.where({ secret: DEMO_KEY_ONE })),
  ).toBeDefined()
  expect((await createCustomer(sandbox, DEMO_KEY_ONE)).status).toBe(201)
  expect((await createCustomer(sandbox, KEY)).status).toBe(401)
})

it('refuses every API key after sandbox.db.apiKeys.clear()', async () => {
  const sandbox = createSandbox({ seed: 1 })
  await sandbox.ready
  sandbox.db.apiKeys.clear()
  expect(sandbox.db.apiKeys.count()).toBe(0)
  for (const key of [DEMO_KEY_ONE, DEMO_KEY_TWO, PERSONA_READ_ONLY_KEY]) {
    const refused = await createCustomer(sandbox, key)
    expect(refused.status, key).toBe(401)
  }
})

it('frees every email after sandbox.db.customers.clear() under uniqueEmail', async () => {
  const sandbox = createSandbox({ seed: 1, uniqueEmail: true })
  await sandbox.ready
  const emails = sandbox.db.customers
    .findMany((q) => q.where({ account_id: ACCOUNT }))
    .map((customer) => customer.email!)
  expect(emails.length).toBeGreaterThan(1)
  sandbox.db.customers.clear()
  expect(sandbox.customers.count()).toBe(0)
  for (const email of emails) {
    expect((await createCustomer(sandbox, DEMO_KEY_ONE, email)).status).toBe(
      201,
    )
  }
  expect(sandbox.customers.count({ accountId: ACCOUNT })).toBe(emails.length)
})

it('refuses a record whose id is taken, and keeps the first one whole', async () => {
  const sandbox = createSandbox({
    seed: 1,
    uniqueEmail: true,
    customersPerAccount: 0,
  })
  await sandbox.ready
  const customer = (id: string, email: string) => ({
    id,
    account_id: ACCOUNT,
    name: 'Ada',
    email,
    created_at: new Date().toISOString(),
  })
  await sandbox.db.customers.create(customer('cus_same', 'first@example.com'))
  await expect(
    sandbox.db.customers.create(customer('cus_same', 'second@example.com')),
  ).rejects.toThrow(
    'Failed to create a customer: the id "cus_same" is already taken. Give each record an id of its own.',
  )
  expect(sandbox.db.customers.count()).toBe(1)
  expect(
    (await createCustomer(sandbox, DEMO_KEY_ONE, 'second@example.com')).status,
  ).toBe(201)

  sandbox.db.customers.delete((q) => q.where({ id: 'cus_same' }))
  expect(
    (await createCustomer(sandbox, DEMO_KEY_ONE, 'first@example.com')).status,
  ).toBe(201)
})

it('refuses an API key whose secret another credential has, so that a key keeps its account', async () => {
  const sandbox = createSandbox({ seed: 1 })
  await sandbox.ready
  await expect(
    sandbox.db.apiKeys.create({
      id: 'key_copy',
      account_id: 'acct_DemoAccount002',
      secret: DEMO_KEY_ONE,
      revoked: false,
      created_at: new Date().toISOString(),
    }),
  ).rejects.toThrow(
    'Failed to create an API key: its secret is already the secret of another API key or token. Give each credential a secret of its own.',
  )
  await expect(
    sandbox.db.apiKeys.update((q) => q.where({ secret: DEMO_KEY_TWO }), {
      data(key) {
        key.secret = DEMO_KEY_ONE
      },
    }),
  ).rejects.toThrow(/Failed to update an API key: its secret is already/)
  const created = await createCustomer(sandbox, DEMO_KEY_ONE)
  expect(created.status).toBe(201)
  expect(sandbox.journal.last()).toMatchObject({ account_id: ACCOUNT })
  expect((await createCustomer(sandbox, DEMO_KEY_TWO)).status).toBe(201)
})

it('mints an API key past the ids and secret that sandbox.db already seeded', async () => {
  const probe = createSandbox({ seed: 1 })
  await probe.ready
  const next = await probe.createApiKey()
  const nextKeyId = probe.accounts.get(next.accountId)!.api_keys[0]!.id

  const sandbox = createSandbox({ seed: 1 })
  await sandbox.ready
  const now = new Date().toISOString()
  await sandbox.db.accounts.create({
    id: next.accountId,
    name: 'Seeded',
    created_at: now,
  })
  await sandbox.db.apiKeys.create({
    id: nextKeyId,
    account_id: next.accountId,
    secret: next.apiKey,
    revoked: false,
    created_at: now,
  })
  const minted = await sandbox.createApiKey()
  expect(minted.accountId).not.toBe(next.accountId)
  expect(minted.apiKey).not.toBe(next.apiKey)
  expect(sandbox.accounts.get(minted.accountId)!.api_keys[0]!.id).not.toBe(
    nextKeyId,
  )
  expect((await createCustomer(sandbox, minted.apiKey)).status).toBe(201)
  expect(sandbox.journal.last()).toMatchObject({ account_id: minted.accountId })
})
