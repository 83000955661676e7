// Runs once: every server here names its own store.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import type { SandboxOptions } from '../../src/options.ts'
import type { SandboxData } from '../../src/model/schemas.ts'
import { postThrough } from '../_targets.ts'
import { runMain, startServer, tempFolder } from '../_servers.ts'

// load() and createSandbox({ from }) took saved data that no call of the API
// could have made: a customer or token of an account the data does not
// hold, more customers or tokens in an account than the limits allow, more
// records than limits.records, more accounts than limits.accounts. Creates then got a truthful 409, but the
// state was one the API never produces. Each is now refused with a
// TypeError naming the first such record, its account and the limit, and
// the sandbox keeps what it held. A sandbox's own data file still loads
// whatever it holds.

const ACCOUNT = 'acct_DemoAccount001'

/** Saved data with two customers in each demo account and one token in the first. */
async function saved(): Promise<SandboxData> {
  const sandbox = createSandbox({ seed: 1, customersPerAccount: 2 })
  await sandbox.ready
  const token = await postThrough(sandbox, '/v2/tokens', {
    scopes: ['customers:write'],
  })
  expect(token.status).toBe(201)
  return structuredClone(sandbox.dump())
}

/** The record lists of saved data, to compare a sandbox's before and after. */
const records = ({ accounts, api_keys, customers, tokens }: SandboxData) => ({
  accounts,
  api_keys,
  customers,
  tokens,
})

/** How many records `data` holds, as `limits.records` counts them. */
const recordCount = (data: SandboxData): number =>
  Object.values(records(data)).reduce((sum, list) => sum + list.length, 0)

/**
 * Loads `data` into a fresh sandbox made with `options`, expects it refused
 * with a TypeError, and that the sandbox still holds its own records.
 */
async function refusedLoad(
  data: SandboxData,
  options: SandboxOptions = {},
): Promise<string> {
  const sandbox = createSandbox({ seed: 2, customersPerAccount: 1, ...options })
  await sandbox.ready
  const before = records(sandbox.dump())
  const error = await sandbox.load(data).then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  expect(error).toBeInstanceOf(TypeError)
  expect(records(sandbox.dump())).toEqual(before)
  return (error as TypeError).message
}

it('load-accepts-an-orphan-customer: refuses it, naming its place and the account, and keeps its data', async () => {
  const data = await saved()
  const customer = data.customers[1]!
  customer.account_id = 'acct_nobody'
  expect(await refusedLoad(data)).toBe(
    `Failed to load sandbox data: customers.1.account_id: "acct_nobody" is not the id of an account in accounts; every record belongs to one.`,
  )
})

it.each([
  ['token', 'token', 'tokens'],
  ['api-key', 'API key', 'api_keys'],
] as const)(
  'load-accepts-an-orphan-%s: refuses it, naming its place and the account',
  async (_, kind, list) => {
    const data = await saved()
    const record = data[list][0]!
    record.account_id = 'acct_nobody'
    expect(await refusedLoad(data)).toContain(
      `${list}.0.account_id: "acct_nobody" is not the id of an account in accounts; every record belongs to one`,
    )
  },
)

it('load-accepts-more-customers-than-the-limit: refuses the first customer past limits.customersPerAccount, naming it, its account and the limit', async () => {
  const data = await saved()
  const extra = {
    ...data.customers[0]!,
    id: 'cus_ExtraCustomer001',
    email: 'extra@example.com',
  }
  data.customers.push(extra)
  expect(extra.account_id).toBe(ACCOUNT)
  expect(await refusedLoad(data, { limits: { customersPerAccount: 2 } })).toBe(
    `Failed to load sandbox data: customers.${data.customers.length - 1}: "${ACCOUNT}" holds more customers than limits: { customersPerAccount: 2 } allows.`,
  )
})

it('load-accepts-more-tokens-than-the-limit: refuses the first token past limits.tokensPerAccount', async () => {
  const data = await saved()
  data.tokens.push({
    ...data.tokens[0]!,
    id: 'tkn_ExtraToken000001',
    secret: 'extra-token-secret-0001',
  })
  expect(await refusedLoad(data, { limits: { tokensPerAccount: 1 } })).toBe(
    `Failed to load sandbox data: tokens.1: "${ACCOUNT}" holds more tokens than limits: { tokensPerAccount: 1 } allows.`,
  )
})

it('load-accepts-more-records-than-the-limit: refuses the first record past limits.records', async () => {
  const data = await saved()
  const total = recordCount(data)
  expect(
    await refusedLoad(data, {
      customersPerAccount: 0,
      limits: { records: total - 1 },
    }),
  ).toBe(
    `Failed to load sandbox data: tokens.0: the data holds more records than limits: { records: ${total - 1} } allows.`,
  )
})

it('load-accepts-more-accounts-than-the-limit: refuses data past limits.accounts, which createApiKey() holds to', async () => {
  const data = await saved()
  const accounts = data.accounts.length
  expect(await refusedLoad(data, { limits: { accounts: accounts - 1 } })).toBe(
    `Failed to load sandbox data: accounts: the data holds more accounts than limits: { accounts: ${accounts - 1} } allows.`,
  )
})

it('loads data that fills every limit exactly, as the API can', async () => {
  const data = await saved()
  const total = recordCount(data)
  const sandbox = createSandbox({
    seed: 2,
    customersPerAccount: 1,
    limits: {
      accounts: data.accounts.length,
      customersPerAccount: 2,
      tokensPerAccount: 1,
      records: total,
    },
  })
  await sandbox.load(data)
  expect(records(sandbox.dump())).toEqual(records(data))
})

/** A session whose first account holds three customers, made through the API. */
async function sessionWithThreeCustomers() {
  const source = createSandbox({ seed: 1, customersPerAccount: 1 })
  await source.ready
  for (const name of ['Ada', 'Grace']) {
    const created = await postThrough(source, '/v1/customers', {
      name,
      email: `${name.toLowerCase()}@example.com`,
    })
    expect(created.status).toBe(201)
  }
  return structuredClone(source.export())
}

it('from-accepts-more-customers-than-the-limit: createSandbox({ from }) refuses a session past a limit passed beside it', async () => {
  const session = await sessionWithThreeCustomers()
  const third = session.data.customers.findLastIndex(
    (customer) => customer.account_id === ACCOUNT,
  )
  let error: unknown
  try {
    createSandbox({ from: session, limits: { customersPerAccount: 2 } })
  } catch (thrown) {
    error = thrown
  }
  expect(error).toBeInstanceOf(TypeError)
  expect((error as TypeError).message).toBe(
    `Failed to create a sandbox from a session: data.customers.${third}: "${ACCOUNT}" holds more customers than limits: { customersPerAccount: 2 } allows.`,
  )
  // Under the limits it was exported with, it replays.
  const replayed = createSandbox({ from: session })
  await replayed.ready
  expect(replayed.customers.count({ accountId: ACCOUNT })).toBe(3)
})

it('from-accepts-more-customers-than-the-limit: --from prints one line naming the record and the limit, and exits non-zero', async () => {
  const file = join(await tempFolder('cts-from-limits-'), 'session.json')
  await writeFile(file, JSON.stringify(await sessionWithThreeCustomers()))
  const [stderr, exitCode] = await runMain([
    '--port',
    '0',
    '--from',
    file,
    '--limits',
    'customersPerAccount=2',
  ])
  expect(exitCode).toBe(2)
  const [first] = stderr.trim().split('\n')
  expect(first).toMatch(
    /data\.customers\.\d+: "acct_DemoAccount001" holds more customers than --limits customersPerAccount=2 allows/,
  )
  expect(stderr).not.toMatch(/\n\s+at /)
})

it('still starts on its own data file that holds a customer of no account and more customers than the limits it restarts with', async () => {
  const file = join(await tempFolder('cts-own-data-'), 'data.jsonl')
  const first = await startServer({
    dataFile: file,
    seed: 1,
    customersPerAccount: 2,
  })
  await first.sandbox.db.customers.create({
    id: 'cus_OrphanCustomer01',
    account_id: 'acct_nobody',
    name: 'Orphan',
    email: 'orphan@example.com',
    created_at: new Date().toISOString(),
  })
  const held = first.sandbox.customers.count()
  await first.close()

  const again = await startServer({
    dataFile: file,
    customersPerAccount: 0,
    limits: { customersPerAccount: 1 },
  })
  expect(again.loadedFromFile).toBe(true)
  expect(again.sandbox.customers.count()).toBe(held)
  expect(again.sandbox.customers.get('cus_OrphanCustomer01')?.account_id).toBe(
    'acct_nobody',
  )
})
