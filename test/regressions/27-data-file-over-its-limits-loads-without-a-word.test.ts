// Runs once: every server here names its own store.
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { createNamed, startCli, tempFolder } from '../_servers.ts'

// A data file filled under higher limits started without a word, and then
// every create answered 409 limit_reached: the operator learned that its
// limits were passed only from the clients' failures. The start now says
// which limit the data passes, by its flag, and what follows from it.

it('says at start which limits the data file passes, and still serves it', async () => {
  const file = join(await tempFolder('cts-over-limits-'), 'sandbox.jsonl')
  const first = await startCli([
    '--port',
    '0',
    '--quiet',
    '--data-file',
    file,
    '--customers',
    '8',
  ])
  expect(await first.stop()).toBe(0)
  expect(first.stderr()).not.toMatch(/more than/)

  const again = await startCli([
    '--port',
    '0',
    '--quiet',
    '--data-file',
    file,
    '--limits',
    'customersPerAccount=5',
    '--limits',
    'records=14',
    // The seed too must fit the limits, though the data file's data is used.
    '--customers',
    '1',
  ])
  const created = await createNamed(again.url, 'Ada')
  expect(created.status).toBe(409)
  const listed = await fetch(`${again.url}/__sandbox/state`).then(
    (r) => r.json() as Promise<{ customers: unknown[] }>,
  )
  expect(listed.customers.length).toBeGreaterThan(5)
  expect(await again.stop()).toBe(0)
  const lines = again.stderr().split('\n')
  const records = lines.find((l) => l.includes('--limits records=14'))
  expect(records).toMatch(
    new RegExp(
      `The data file ${file.replace(/[.]/g, '\\.')} holds \\d+ records, more than --limits records=14 allows: every create past it answers 409 limit_reached`,
    ),
  )
  const customers = lines.find((l) =>
    l.includes('--limits customersPerAccount=5'),
  )
  expect(customers).toMatch(
    /holds more customers than --limits customersPerAccount=5 allows in (the account acct_\w+ \(8\)|\d+ accounts, the most \(8\) in acct_\w+): .*--limits customersPerAccount is raised\.$/,
  )
})
