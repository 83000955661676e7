import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { openDataFileLog, readDataFile } from '../../src/model/data-file.ts'
import type { CustomerRecord } from '../../src/model/schemas.ts'
import { tempDataFile } from '../_servers.ts'

// A write queued just as the data file's writer finished its last batch
// found it still running and waited for the next write to come: a create
// answered right after another one's line was stored never answered, as
// long as nothing else was written.

const customer = (n: number): CustomerRecord => ({
  id: `cus_QueuedWhenIdle${n}`,
  account_id: 'acct_DemoAccount001',
  name: `Customer ${n}`,
  email: `c${n}@example.com`,
  created_at: '2026-01-01T00:00:00.000Z',
})

it('stores a write queued as soon as the one before it is stored', async () => {
  const file = await tempDataFile('cts-idle-')
  const sandbox = createSandbox({ seed: 1, customersPerAccount: 1 })
  await sandbox.ready
  const data = { ...sandbox.dump(), idempotency_keys: [] }
  const log = await openDataFileLog(file, {
    dump: () => data,
    settled: async () => {},
  })
  const never = new Promise<string>((resolve) => {
    setTimeout(() => resolve('still waiting'), 2000).unref()
  })
  const store = (n: number) => {
    data.customers.push(customer(n))
    return log.commit({ created: { customer: customer(n) } }, undefined)
  }
  // Each second write is queued a few more turns after the first is
  // stored: one of them as the writer's loop has ended and not yet said so.
  for (let n = 0; n < 8; n++) {
    const second = store(2 * n).then(async () => {
      for (let turn = 0; turn < n; turn++) await Promise.resolve()
      await store(2 * n + 1)
      return 'stored'
    })
    expect(await Promise.race([second, never])).toBe('stored')
  }
  await log.close()
  const { customers } = (await readDataFile(file)) as {
    customers: CustomerRecord[]
  }
  expect(customers.map((c) => c.id)).toContain(customer(15).id)
})
