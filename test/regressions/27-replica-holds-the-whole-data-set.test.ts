// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import {
  DEFAULT_ACCOUNTS,
  DEMO_KEY_ONE,
  DEMO_KEY_TWO,
} from '../../fixtures/demo-keys.ts'
import { startRedis } from '../_redis.ts'
import { postCustomer, startServer } from '../_servers.ts'

// A replica on Redis loaded every account's customers and tokens before it
// served its first request: with 100k customers in Redis it held the whole
// data set (2.65× the memory of a replica on an empty Redis) and took 2 s
// to start. It now loads an account's records when a request first asks
// for them, and holds only those; what it has not loaded still counts
// towards the limits, a token is found by its secret, and the sandbox's
// own API still sees every account.

const CUSTOMERS = 300

/** A Redis, and the first replica on it, which seeds it with unique emails. */
async function seededFleet(namespace: string) {
  const redis = await startRedis()
  const store = { url: redis.url, namespace }
  const options = {
    seed: 1,
    customersPerAccount: CUSTOMERS,
    uniqueEmail: true,
    store,
  }
  return { store, options, first: await startServer(options) }
}

const mintToken = async (url: string, key: string): Promise<string> => {
  const answer = await fetch(`${url}/v2/tokens`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      scopes: ['customers:read', 'customers:write'],
      expires_in: 3600,
    }),
  })
  expect(answer.status).toBe(201)
  return ((await answer.json()) as { token: string }).token
}

it('loads only the accounts its requests ask for, and their records whole', async () => {
  const { options, first } = await seededFleet('lazy')
  const seeded = first.sandbox.db.customers.findMany()
  const ofOne = (accountId: string) =>
    seeded.filter((c) => c.account_id === accountId)
  // The first demo account's: the demo key's, which postCustomer sends.
  const account = DEFAULT_ACCOUNTS[0]!.id
  const taken = ofOne(account)[0]
  const token = await mintToken(first.url, DEMO_KEY_TWO)

  const second = await startServer(options)
  // Nothing loaded before a request asks.
  expect(second.sandbox.db.customers.count()).toBe(0)

  // The demo key's account: its seeded emails are taken here too.
  const clash = await postCustomer(second.url, {
    name: 'Clash',
    email: taken!.email,
  })
  expect(clash.status).toBe(409)
  expect(second.sandbox.db.customers.count()).toBe(ofOne(account).length)
  expect(
    second.sandbox.db.customers
      .findMany()
      .every((c) => c.account_id === account),
  ).toBe(true)

  // A token of an account not loaded yet is found by its secret.
  const created = await postCustomer(
    second.url,
    { name: 'By Token', email: 'by-token@example.com' },
    { headers: { authorization: `Bearer ${token}` } },
  )
  expect(created.status).toBe(201)

  // The sandbox's own API reads every account, as the first replica does.
  const state = async (url: string) =>
    (await (await fetch(`${url}/__sandbox/state`)).json()) as {
      customers: { id: string }[]
      tokens: { id: string }[]
    }
  const [one, two] = await Promise.all([state(first.url), state(second.url)])
  expect(two.customers.map((c) => c.id).toSorted()).toEqual(
    one.customers.map((c) => c.id).toSorted(),
  )
  expect(two.tokens.map((t) => t.id).toSorted()).toEqual(
    one.tokens.map((t) => t.id).toSorted(),
  )
  expect(one.customers.length).toBe(seeded.length + 1)
})

it('counts the records it has not loaded towards limits.records', async () => {
  const redis = await startRedis()
  const store = { url: redis.url, namespace: 'lazy-limits' }
  // What the fixtures seed: accounts, API keys, and the customers of the
  // accounts that take customersPerAccount.
  const records = DEFAULT_ACCOUNTS.reduce(
    (sum, fixture) =>
      sum + 1 + fixture.apiKeys.length + (fixture.customers ?? CUSTOMERS),
    0,
  )
  // Room for one record more than Redis holds, on every replica.
  const options = {
    seed: 1,
    customersPerAccount: CUSTOMERS,
    limits: { records: records + 1 },
    store,
  }
  const first = await startServer(options)
  expect(
    first.sandbox.db.accounts.count() +
      first.sandbox.db.apiKeys.count() +
      first.sandbox.db.customers.count(),
  ).toBe(records)
  const second = await startServer(options)
  const demoTwo = { authorization: `Bearer ${DEMO_KEY_TWO}` }
  const one = await postCustomer(
    second.url,
    { name: 'Fits', email: 'fits@example.com' },
    { headers: demoTwo },
  )
  expect(one.status).toBe(201)
  // Only the second demo account is loaded; the first one's records count.
  const full = await postCustomer(
    second.url,
    { name: 'Past It', email: 'past@example.com' },
    { headers: demoTwo },
  )
  expect(full.status).toBe(409)
  expect(((await full.json()) as { code: string }).code).toBe('limit_reached')
  expect(
    second.sandbox.db.customers.findMany().some((c) => c.name === 'Past It'),
  ).toBe(false)
})

it('lets go of the account used longest ago past cacheRecords, and loads it again when asked', async () => {
  const { store, options, first } = await seededFleet('lazy-cache')
  const [one, two] = DEFAULT_ACCOUNTS.map((fixture) => fixture.id)
  const emailOf = (accountId: string) =>
    first.sandbox.db.customers.findFirst((q) =>
      q.where({ account_id: accountId }),
    )!.email
  const second = await startServer({
    ...options,
    store: { ...store, cacheRecords: CUSTOMERS + 100 },
  })
  const loadedAccounts = () =>
    new Set(second.sandbox.db.customers.findMany().map((c) => c.account_id))
  // Every request waits for what the store does before it: a health check
  // comes after the letting go that the last answer started.
  const settled = () => fetch(`${second.url}/__sandbox/health`)

  const clashIn = async (accountId: string, key: string) => {
    const answer = await postCustomer(
      second.url,
      { name: 'Clash', email: emailOf(accountId) },
      { headers: { authorization: `Bearer ${key}` } },
    )
    expect(answer.status).toBe(409)
    await settled()
  }
  await clashIn(one!, DEMO_KEY_ONE)
  expect(loadedAccounts()).toEqual(new Set([one]))
  await clashIn(two!, DEMO_KEY_TWO)
  expect(loadedAccounts()).toEqual(new Set([two]))
  expect(second.sandbox.db.customers.count()).toBe(CUSTOMERS)
  // Loaded again, whole: its seeded emails are taken again.
  await clashIn(one!, DEMO_KEY_ONE)
  expect(loadedAccounts()).toEqual(new Set([one]))
  expect(second.sandbox.db.customers.count()).toBe(CUSTOMERS)
})
