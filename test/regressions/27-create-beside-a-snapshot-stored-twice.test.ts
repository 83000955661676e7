// Runs once: every server here names its own store.
import { appendFile, copyFile, readFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { createSandbox } from '../../src/index.ts'
import { openDataFileLog, readDataFile } from '../../src/model/data-file.ts'
import type { CustomerRecord } from '../../src/model/schemas.ts'
import { startServer, tempDataFile } from '../_servers.ts'

// Creates racing resets and restores, then kill -9 and a restart on the same
// file: "customers.64.id is already the id of another record", and the
// server would not start. A snapshot of the data file checked the file
// between taking its batch and its dump: a create made meanwhile was in the
// dump and, its line queued after the batch, appended once more.

const start = (dataFile: string) =>
  startServer({ customersPerAccount: 2, dataFile })

it('writes a customer created while a snapshot checks the file once, and a restart loads it', async () => {
  const file = await tempDataFile('cts-twice-')
  const sandbox = createSandbox({ seed: 1, customersPerAccount: 1 })
  await sandbox.ready
  const data = { ...sandbox.dump(), idempotency_keys: [] }
  const customer: CustomerRecord = {
    id: 'cus_MadeBesideASnap',
    account_id: 'acct_DemoAccount001',
    name: 'Ada',
    email: 'ada@example.com',
    created_at: '2026-01-01T00:00:00.000Z',
  }
  // Settles once the create's line is stored.
  let made!: (stored: Promise<void>) => void
  const created = new Promise<void>((resolve) => {
    made = resolve
  })
  let snapshots = 0
  const log = await openDataFileLog(file, {
    dump: () => ({ ...data, customers: [...data.customers] }),
    // A create under way as the snapshot starts: its record is in memory
    // a few turns later, and its line is queued after that.
    settled: async () => {
      if (snapshots++ > 0) return
      void turns(10).then(() => {
        data.customers.push(customer)
        made(log.commit({ created: { customer } }, undefined))
      })
    },
  })
  await log.saveState()
  await created
  // What kill -9 now would leave; closing writes a last snapshot.
  const copy = `${file}.copy`
  await copyFile(file, copy)
  await log.close()

  const lines = (await readFile(copy, 'utf8')).split('\n')
  expect(lines.filter((line) => line.includes(customer.id))).toHaveLength(1)
  const server = await start(copy)
  expect(server.sandbox.customers.get(customer.id)?.name).toBe('Ada')
})

/** Resolves after `n` turns of the microtask queue. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await Promise.resolve()
}

it('starts on a data file that holds the same customer twice, as the race left it, and keeps it once', async () => {
  const file = await tempDataFile('cts-twice-')
  const first = await start(file)
  const created = await fetch(`${first.url}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
  })
  const { id } = (await created.json()) as { id: string }
  await first.close()
  const line = (await readFile(file, 'utf8'))
    .split('\n')
    .find((text) => text.includes(id))!
  await appendFile(file, `${line}\n`)

  const again = await start(file)
  expect(again.loadedFromFile).toBe(true)
  expect(
    again.sandbox.customers.list().filter((c) => c.id === id),
  ).toHaveLength(1)
})

it('still refuses a data file where two different customers share an id', async () => {
  const file = await tempDataFile('cts-twice-')
  await (await start(file)).close()
  const { customers } = (await readDataFile(file)) as {
    customers: CustomerRecord[]
  }
  const other = { ...customers[0]!, name: 'Someone else' }
  await appendFile(file, `${JSON.stringify({ customer: other })}\n`)
  await expect(start(file)).rejects.toThrow(/already the id/)
})
