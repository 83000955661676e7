import { expect, it } from 'vitest'
import { DEMO_KEY_ONE, DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'
import { startRedis } from '../_redis.ts'
import { postCustomer, startServer } from '../_servers.ts'

// A replica past cacheRecords let go of an account's records first and
// marked it unloaded after: a request of that account that came between
// the two found it loaded, and was answered from none of its records. With
// --unique-email it stored a second customer with an email the account
// held already (201, where 409 email_taken was due).

it('answers 409 email_taken for an email its account holds while it lets go of accounts', async () => {
  const redis = await startRedis()
  const store = { url: redis.url, namespace: 'lazy-evict' }
  const options = { seed: 1, customersPerAccount: 3, uniqueEmail: true, store }
  await startServer(options)
  // Room for one record: every answer lets go of the accounts it used.
  const replica = await startServer({
    ...options,
    store: { ...store, cacheRecords: 1 },
  })
  const keys = [DEMO_KEY_ONE, DEMO_KEY_TWO]
  const sent = Array.from({ length: 400 }, (_, at) => ({
    key: keys[at % 2]!,
    email: `ada-${at % 16}@example.com`,
  }))
  const answers = await Promise.all(
    sent.map(({ key, email }) =>
      postCustomer(
        replica.url,
        { name: 'Ada', email },
        { headers: { authorization: `Bearer ${key}` } },
      ),
    ),
  )
  const created = new Map<string, number>()
  for (const [at, answer] of answers.entries()) {
    expect([201, 409]).toContain(answer.status)
    if (answer.status !== 201) continue
    const { key, email } = sent[at]!
    created.set(`${key} ${email}`, (created.get(`${key} ${email}`) ?? 0) + 1)
  }
  // Each email once in each account: 8 emails each.
  expect([...created.values()]).toEqual(Array(16).fill(1))
})
