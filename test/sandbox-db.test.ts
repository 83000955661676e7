import { expect, it } from 'vitest'
import { postThrough } from './_targets.ts'
import { createSandbox } from '../src/index.ts'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'

const ACCOUNT = 'acct_DemoAccount001'

it('seeds a customer through sandbox.db that queries find and uniqueEmail counts', async () => {
  const sandbox = createSandbox({ seed: 1, uniqueEmail: true })
  await sandbox.ready
  await sandbox.db.customers.create({
    id: 'cus_ada',
    account_id: ACCOUNT,
    name: 'Ada',
    email: 'ada@example.com',
    created_at: new Date().toISOString(),
  })
  expect(
    sandbox.db.customers.findFirst((q) =>
      q.where({ email: 'ada@example.com' }),
    ),
  ).toMatchObject({ id: 'cus_ada', name: 'Ada' })
  expect(sandbox.customers.get('cus_ada')).toMatchObject({ name: 'Ada' })

  const duplicate = await postThrough(sandbox, '/v1/customers', {
    name: 'Ada again',
    email: 'ADA@example.com',
  })
  expect(duplicate.status).toBe(409)
  expect((await duplicate.json()).code).toBe('email_taken')

  sandbox.db.customers.delete((q) => q.where({ id: 'cus_ada' }))
  expect(sandbox.customers.get('cus_ada')).toBeUndefined()
  const freed = await postThrough(sandbox, '/v1/customers', {
    name: 'Ada again',
    email: 'ADA@example.com',
  })
  expect(freed.status).toBe(201)
})

it('accepts a token written through sandbox.db as a credential, and stops when it is deleted', async () => {
  const sandbox = createSandbox({ seed: 1 })
  await sandbox.ready
  const secret = 'tok_test_SeededThroughTheDataModel0001'
  await sandbox.db.tokens.create({
    id: 'tkn_seeded',
    account_id: ACCOUNT,
    secret,
    scopes: ['customers:write'],
    expires_in: 3600,
    expires_at: new Date(
      sandbox.clock.now().getTime() + 3_600_000,
    ).toISOString(),
    created_at: sandbox.clock.now().toISOString(),
    issued_by: 'key_seed',
  })
  const created = await postThrough(
    sandbox,
    '/v1/customers',
    { name: 'Grace', email: 'grace@example.com' },
    secret,
  )
  expect(created.status).toBe(201)
  expect(sandbox.journal.last()).toMatchObject({ account_id: ACCOUNT })

  sandbox.db.tokens.delete((q) => q.where({ id: 'tkn_seeded' }))
  const refused = await postThrough(
    sandbox,
    '/v1/customers',
    { name: 'Grace', email: 'grace@example.com' },
    secret,
  )
  expect(refused.status).toBe(401)
  expect((await refused.json()).code).toBe('invalid_credentials')
})

it('follows updates through sandbox.db: a revoked key is refused', async () => {
  const sandbox = createSandbox({ seed: 1 })
  await sandbox.ready
  await sandbox.db.apiKeys.update((q) => q.where({ secret: DEMO_KEY_ONE }), {
    data(key) {
      key.revoked = true
    },
  })
  const refused = await postThrough(sandbox, '/v1/customers', {
    name: 'Ada',
    email: 'ada@example.com',
  })
  expect(refused.status).toBe(401)
  expect((await refused.json()).detail).toMatch(/revoked/)
})

it('refuses a record that does not match its schema, and keeps nothing of it', async () => {
  const sandbox = createSandbox({ seed: 1, customersPerAccount: 0 })
  await sandbox.ready
  const errors: unknown[] = []
  const original = console.error
  console.error = (...args: unknown[]) => errors.push(args)
  try {
    await expect(
      sandbox.db.customers.create({
        id: 'cus_bad',
        account_id: ACCOUNT,
        created_at: 'yesterday',
      }),
    ).rejects.toThrow(/does not match the schema/)
  } finally {
    console.error = original
  }
  expect(sandbox.customers.count()).toBe(0)
  expect(sandbox.customers.get('cus_bad')).toBeUndefined()
})

it('gives the records the API makes to sandbox.db queries', async () => {
  const sandbox = createSandbox({ seed: 1, customersPerAccount: 0 })
  await sandbox.ready
  const created = await postThrough(sandbox, '/v1/customers', {
    name: 'Ada',
    email: 'ada@example.com',
  })
  const { id } = await created.json()
  expect(
    sandbox.db.customers.findFirst((q) =>
      q.where({ email: 'ada@example.com' }),
    ),
  ).toMatchObject({ id, account_id: ACCOUNT })
  expect(sandbox.db.customers.count()).toBe(1)
})

it('counts customers seeded with createMany: their emails are taken and the per-account limit sees them', async () => {
  const sandbox = createSandbox({
    seed: 1,
    uniqueEmail: true,
    customersPerAccount: 0,
    limits: { customersPerAccount: 3 },
  })
  await sandbox.ready
  const before = sandbox.customers.count({ accountId: ACCOUNT })
  await sandbox.db.customers.createMany(3, (i) => ({
    id: `cus_many${i}`,
    account_id: ACCOUNT,
    name: `Many ${i}`,
    email: `many${i}@example.com`,
    created_at: new Date().toISOString(),
  }))
  expect(sandbox.customers.count({ accountId: ACCOUNT })).toBe(before + 3)
  expect(sandbox.customers.get('cus_many2')).toMatchObject({ name: 'Many 2' })

  const taken = await postThrough(sandbox, '/v1/customers', {
    name: 'Again',
    email: 'MANY1@example.com',
  })
  expect(taken.status).toBe(409)
  expect((await taken.json()).code).toBe('email_taken')

  const full = await postThrough(sandbox, '/v1/customers', {
    name: 'One more',
    email: 'more@example.com',
  })
  expect(full.status).toBe(409)
  expect((await full.json()).code).toBe('limit_reached')
  expect(sandbox.customers.count({ accountId: ACCOUNT })).toBe(before + 3)
})
