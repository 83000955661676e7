import { expect, it } from 'vitest'
import { LEDGER } from '../../src/contract.ts'
import { startServer, tempDataFile } from '../_servers.ts'

// A retry with an Idempotency-Key sent to a server with --data-file after
// it restarted created the customer a second time, while the README
// promised a replay within the key's 24 h and said of the data file only
// that a 201 survives. The keys live in memory; the ledger and README now
// say so, and this pins the behaviour they describe.

const retry = (url: string) =>
  fetch(`${url}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: 'Bearer sk_test_DemoKeyForTheSandbox0001',
      'content-type': 'application/json',
      'idempotency-key': 'order-42',
    },
    body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
  })

it('says that a restart forgets Idempotency-Keys, which a retry after one shows', async () => {
  const row = LEDGER.find((assumption) => assumption.id === 'idempotency')!
  expect(row.default).toContain('a restart of the server forget them')
  expect(row.default).toContain(
    'a `--data-file` keeps the records, not the keys',
  )

  const dataFile = await tempDataFile('cts-idem-')
  const first = await startServer({ dataFile, customersPerAccount: 0 })
  const created = await retry(first.url)
  const replayed = await retry(first.url)
  expect(replayed.headers.get('idempotent-replayed')).toBe('true')
  const id = ((await created.json()) as { id: string }).id
  expect(((await replayed.json()) as { id: string }).id).toBe(id)
  await first.close()

  const again = await startServer({ dataFile, customersPerAccount: 0 })
  const after = await retry(again.url)
  expect(after.status).toBe(201)
  expect(after.headers.get('idempotent-replayed')).toBeNull()
  expect(((await after.json()) as { id: string }).id).not.toBe(id)
  expect(
    again.sandbox.customers
      .list({ accountId: 'acct_DemoAccount001' })
      .map((customer) => customer.name),
  ).toEqual(['Ada', 'Ada'])
})
