// Runs once: every server here names its own store.
import { createClient } from '@redis/client'
import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'
import { startRedis } from '../_redis.ts'
import { customerNames, postCustomer, startServer } from '../_servers.ts'

// The earlier versions kept a sandbox in one slot: each account's records
// in `{ns}:g:<gen>:a:<account>`, and every create in the sandbox's log.
// A replica of this version that opens such a store stores its state again,
// each account in a list of its own under its own hash tag, and serves
// every record the earlier version stored, those of its log's writes too.

it('stores a log of the earlier version again, each account apart, losing none of its records', async () => {
  const redis = await startRedis()
  // What the earlier version held: a state whose records are its
  // generation's lists, and a create written in the log after it (and in
  // its account's list).
  const earlier = createSandbox({ seed: 1, customersPerAccount: 1 })
  await earlier.ready
  const data = earlier.dump()
  const [inList, inLog] = data.customers
  expect(inList?.account_id).toBe('acct_DemoAccount001')
  expect(inLog?.account_id).toBe('acct_DemoAccount002')
  const gen = 'earlier-generation'
  const client = createClient({ url: redis.url }).on('error', () => {})
  await client.connect()
  await client.rPush('{earlier}:log', [
    JSON.stringify({
      state: { ...data, customers: [], tokens: [], idempotency_keys: [] },
      gen,
      counts: { acct_DemoAccount001: 1 },
      tokens: 0,
      by: 'earlier:1',
    }),
    JSON.stringify({
      write: { created: { customer: inLog } },
      by: 'earlier:2',
    }),
  ])
  await client.set('{earlier}:last-state', '0')
  await client.set('{earlier}:gen', gen)
  // The earlier version pushed a created record to its account's list too.
  for (const customer of [inList, inLog])
    await client.rPush(
      `{earlier}:g:${gen}:a:${customer!.account_id}`,
      JSON.stringify({ customer }),
    )
  await client.sAdd(`{earlier}:g:${gen}:accounts`, [
    'acct_DemoAccount001',
    'acct_DemoAccount002',
  ])

  const options = { seed: 1, store: { url: redis.url, namespace: 'earlier' } }
  const replica = await startServer(options)
  expect((await customerNames(replica.url)).toSorted()).toEqual(
    [inList!.name, inLog!.name].toSorted(),
  )
  // Stored again as a whole state of this version: each account's list
  // under its own tag, the earlier generation's lists gone.
  const last = (await client.lIndex('{earlier}:log', -1))!
  expect(JSON.parse(last)).toMatchObject({ layout: 2 })
  const current = await client.get('{earlier}:gen')
  expect(current).not.toBe(gen)
  expect(await client.keys(`{earlier}:g:${gen}:a:*`)).toEqual([])
  expect((await client.keys(`{earlier:*}:g:${current}`)).toSorted()).toEqual(
    data.accounts.map(({ id }) => `{earlier:${id}}:g:${current}`).toSorted(),
  )

  // Another replica serves them, and writes beside them.
  const other = await startServer(options)
  const created = await postCustomer(
    other.url,
    { name: 'After', email: 'after@example.com' },
    { headers: { authorization: `Bearer ${DEMO_KEY_TWO}` } },
  )
  expect(created.status).toBe(201)
  expect((await customerNames(replica.url)).toSorted()).toEqual(
    [inList!.name, inLog!.name, 'After'].toSorted(),
  )
  client.destroy()
}, 30_000)
