import { expect, it } from 'vitest'
import { createDatabase } from '../../src/model/db.ts'
import type { SandboxContext } from '../../src/request/context.ts'
import { storedOnly } from '../../src/request/stored-records.ts'
import type { Store } from '../../src/model/store.ts'

// Found by the fleet property test on a Redis Cluster (seed 111879054):
// GET /__sandbox/state on a replica listed one customer and counted two in
// the account's `customer_count`. An account counts a customer from the
// moment its create checks it in (so that no concurrent create passes the
// same checks), a few microtasks before the collection lists it, and the
// state was read in between. The answer now counts what it lists.

it('counts in a state read only the customers it lists, while a create checks one in', async () => {
  const db = createDatabase({ indexEmails: true })
  const now = new Date(0).toISOString()
  await db.insertAccount({ id: 'acct_1', name: 'One', created_at: now })
  const customer = (id: string) => ({
    id,
    account_id: 'acct_1',
    name: id,
    email: `${id}@example.com`,
    created_at: now,
  })
  await db.insertCustomer(customer('cus_stored'))
  // Checked in, and not in the collection yet: the state is read now.
  const checkingIn = db.insertCustomer(customer('cus_checking_in'))
  const read = {
    accounts: [
      {
        id: 'acct_1',
        customer_count: db.customersOf('acct_1').length,
        token_count: db.tokensOf('acct_1').length,
      },
    ],
    customers: db.customers.all().map((record) => ({ ...record })),
    tokens: db.tokens.all().map((record) => ({ ...record })),
  }
  // What the state read saw: the race itself, in the data model.
  expect(read.customers.map((record) => record.id)).toEqual(['cus_stored'])
  expect(read.accounts[0]!.customer_count).toBe(2)
  await checkingIn

  const ctx = {
    db,
    storage: {} as Store,
    writesUnderWay: new Set<Promise<unknown>>(),
  } as unknown as SandboxContext
  const answered = await storedOnly(ctx, read)
  expect(answered.customers.map((record) => record.id)).toEqual(['cus_stored'])
  expect(answered.accounts).toEqual([
    { id: 'acct_1', customer_count: 1, token_count: 0 },
  ])
})
