import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { DEFAULT_ACCOUNTS, DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { createSandbox } from '../../src/runtimes/create-sandbox.ts'
import { createNamed, runCli, startCli, tempFolder } from '../_servers.ts'

// `--customers 1000000` seeded past limits.records (seeded records are never
// refused), and then every create got 409 limit_reached before the server
// had answered anything: full before its first request.

const fixtureRecords = DEFAULT_ACCOUNTS.reduce(
  (sum, account) => sum + 1 + account.apiKeys.length,
  0,
)
// Accounts that take `customersPerAccount` (the persona account seeds none).
const seededAccounts = DEFAULT_ACCOUNTS.filter(
  (account) => account.customers === undefined,
).length

it('refuses --customers 1000000 at once, naming limits.records and the flag to raise it', async () => {
  const cli = runCli(['--port', '0', '--quiet', '--customers', '1000000'])
  expect(await cli.exited).toBe(2)
  expect(cli.stdout()).not.toContain('http://')
  const first = cli.stderr().split('\n')[0]!
  expect(first).toContain('limits.records')
  expect(first).toContain('--limits records=N')
  expect(first).toContain(
    `${(seededAccounts * 1_000_000 + fixtureRecords).toLocaleString('en')} records`,
  )
  expect(first).toContain('--customers')
  expect(cli.stderr()).toContain('--help')
})

it('refuses a config file whose seed fills an account, naming limits.customersPerAccount', async () => {
  const folder = await tempFolder('cts-seed-limit-')
  const config = join(folder, 'sandbox.config.json')
  await writeFile(config, JSON.stringify({ customers: 10_000 }))
  const cli = runCli(['--port', '0', '--quiet', '--config', config])
  expect(await cli.exited).toBe(2)
  const first = cli.stderr().split('\n')[0]!
  expect(first).toContain('limits.customersPerAccount')
  expect(first).toContain('--limits customersPerAccount=N')
  expect(first).toContain('10,000 customers')
})

it('throws a RangeError from createSandbox when the seed reaches limits.records, and not below it', async () => {
  const records = fixtureRecords + seededAccounts * 5
  expect(() =>
    createSandbox({ customersPerAccount: 5, limits: { records } }),
  ).toThrow(RangeError)
  expect(() =>
    createSandbox({ customersPerAccount: 5, limits: { records } }),
  ).toThrow(/limits\.records \([\d,]+\).*limits: \{ records: N \}/)
  // Said to a JavaScript caller with the options' names, not the CLI's flags.
  expect(() =>
    createSandbox({ customersPerAccount: 5, limits: { records } }),
  ).toThrow(
    'Seed fewer customers (customersPerAccount: N) or raise the limit (limits: { records: N }).',
  )
  expect(() =>
    createSandbox({ customersPerAccount: 5, limits: { records } }),
  ).not.toThrow(/--/)

  // One record of room: the first create is stored, the next one refused.
  const sandbox = createSandbox({
    customersPerAccount: 5,
    limits: { records: records + 1 },
  })
  await sandbox.ready
  const create = () =>
    sandbox.fetch(
      new Request('http://localhost/v1/customers', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${DEMO_KEY_ONE}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
      }),
    )
  expect((await create()).status).toBe(201)
  expect((await create()).status).toBe(409)
})

it('throws when a fixture account is seeded with as many customers as limits.customersPerAccount allows', () => {
  const accounts = [{ ...DEFAULT_ACCOUNTS[0]!, customers: 3 }]
  expect(() =>
    createSandbox({
      fixtures: { accounts },
      limits: { customersPerAccount: 3 },
    }),
  ).toThrow(
    `limits.customersPerAccount (3): account "${accounts[0]!.id}" is seeded with 3 customers`,
  )
  expect(() =>
    createSandbox({
      fixtures: { accounts },
      limits: { customersPerAccount: 4 },
    }),
  ).not.toThrow()
})

it('starts with the limit raised by the flag the message names', async () => {
  const cli = await startCli([
    '--port',
    '0',
    '--quiet',
    '--customers',
    '30',
    '--limits',
    'customersPerAccount=31',
  ])
  const response = await createNamed(cli.url, 'Ada')
  expect(response.status).toBe(201)
})
