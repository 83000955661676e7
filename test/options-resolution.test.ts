import { describe, expect, it } from 'vitest'
import { LEDGER } from '../src/assumptions.ts'
import { USAGE } from '../src/cli/cli.ts'
import {
  createSandbox,
  resolveOptions,
  type SandboxOptions,
} from '../src/index.ts'
import { DEFAULT_ACCOUNTS } from '../src/fixtures.ts'
import { DEFAULTS } from '../src/contract.ts'

it('settles every default in one place', () => {
  const o = resolveOptions()
  expect({
    ...o,
    errorFormat: o.errorFormat.name,
    fixtures: o.fixtures.accounts.length,
  }).toEqual({
    seed: 1,
    baseUrl: undefined,
    deterministic: true,
    fixtures: DEFAULT_ACCOUNTS.length,
    customersPerAccount: 25,
    unknownFields: 'reject',
    requiredFields: ['name', 'email'],
    nameLength: { min: 1, max: 200 },
    emailMaxLength: 254,
    uniqueEmail: false,
    scopes: ['customers:read', 'customers:write', 'tokens:write'],
    maxScopes: 20,
    expiresIn: { default: 3600, min: 60, max: 86_400 },
    v1AcceptsTokens: true,
    tokenIssuers: 'api-keys-and-tokens',
    rateLimit: false,
    latency: false,
    errorFormat: 'problemJson',
    maxBodyBytes: 1_048_576,
    clockAfterSet: 'frozen',
    idempotency: {
      ttlSeconds: 86_400,
      maxEntries: 50_000,
      maxEntriesPerAccount: 1_000,
    },
    limits: {
      customersPerAccount: 10_000,
      tokensPerAccount: 10_000,
      records: 300_000,
      accounts: 10_000,
      scenarios: 1_000,
      scenariosPerAccount: 100,
      snapshots: 10,
    },
    journalLimit: 1000,
    adminToken: undefined,
    onRequest: undefined,
    onSeedProgress: undefined,
  })
})

it('merges partial nested options with their defaults', () => {
  expect(resolveOptions({ expiresIn: { max: 600 } }).expiresIn).toEqual({
    default: 600,
    min: 60,
    max: 600,
  })
  expect(resolveOptions({ nameLength: { max: 50 } }).nameLength).toEqual({
    min: 1,
    max: 50,
  })
  expect(
    resolveOptions({ idempotency: { ttlSeconds: 60 } }).idempotency,
  ).toEqual({ ttlSeconds: 60, maxEntries: 50_000, maxEntriesPerAccount: 1_000 })
  expect(
    resolveOptions({ baseUrl: 'https://api.acme.test/api' }).baseUrl?.href,
  ).toBe('https://api.acme.test/api')
})

const bad: [string, SandboxOptions | Record<string, unknown>, RegExp][] = [
  [
    'a negative seed',
    { seed: -1 },
    /option "seed" must be a whole number from 0 to 4294967295, not -1\. /,
  ],
  // In the project's words, not zod's ("Too small: expected number to be
  // >=1"), and the field's own bound alone beyond the safe integers.
  [
    'a journalLimit of 0',
    { journalLimit: 0 },
    /option "journalLimit" must be a whole number of at least 1, not 0\. See SandboxOptions/,
  ],
  [
    'a seed beyond the safe integers',
    { seed: 1e300 },
    /option "seed" must be a whole number from 0 to 4294967295, not 1e\+300\. /,
  ],
  [
    'a rate limit of 0',
    { rateLimit: { limit: 0, windowSeconds: 60 } },
    /option "rateLimit\.limit" must be a whole number of at least 1, not 0\. /,
  ],
  [
    'a relative baseUrl',
    { baseUrl: 'nope' },
    /"baseUrl" must be an absolute URL/,
  ],
  [
    'expiresIn.min above max',
    { expiresIn: { min: 100, max: 50 } },
    /expiresIn\.min/,
  ],
  [
    'a default outside the bounds',
    { expiresIn: { default: 10 } },
    /expiresIn\.default/,
  ],
  [
    'nameLength.min above max',
    { nameLength: { min: 10, max: 5 } },
    /nameLength\.min/,
  ],
  ['an inverted latency', { latency: { min: 50, max: 10 } }, /latency\.min/],
  [
    'a scope listed twice',
    { scopes: ['a:b', 'a:b'] },
    /"scopes" lists a scope twice/,
  ],
  [
    'a scope not of the form a:b',
    { scopes: ['customers'] },
    /<resource>:<access>/,
  ],
  [
    'a fixture key of the wrong shape',
    {
      fixtures: {
        accounts: [
          {
            id: 'acct_DemoAccount009',
            name: 'x',
            apiKeys: [{ key: 'sk_live_x' }],
          },
        ],
      },
    },
    /sk_test_/,
  ],
  [
    'a fixture account listed twice',
    {
      fixtures: {
        accounts: [
          DEFAULT_ACCOUNTS[1]!,
          { ...DEFAULT_ACCOUNTS[1]!, apiKeys: [] },
        ],
      },
    },
    /listed twice/,
  ],
  ['an unknown option', { seeds: 3 }, /unknown option "seeds"/],
  [
    'an unknown option inside another',
    { idempotency: { ttl: 60 } },
    /unknown option "idempotency\.ttl"\. See SandboxOptions/,
  ],
  [
    'an errorFormat that is not a function',
    { errorFormat: 'json' },
    /"errorFormat" must be a function/,
  ],
  [
    'a short admin token',
    { adminToken: 'short' },
    /"adminToken" must be at least 16 characters/,
  ],
  [
    'an unknown unknownFields mode',
    { unknownFields: 'drop' },
    /"unknownFields"/,
  ],
]

it.each(bad)(
  'throws at creation, naming the option, for %s',
  (_, options, message) => {
    expect(() => createSandbox(options as SandboxOptions)).toThrow(message)
    expect(() => createSandbox(options as SandboxOptions)).toThrow(
      /^Failed to create a sandbox: /,
    )
  },
)

it('refuses to be read before seeding is done, and reads after sandbox.ready', async () => {
  const sandbox = createSandbox()
  expect(() => sandbox.customers.list()).toThrow(
    /still seeding\. Await sandbox\.ready/,
  )
  await sandbox.ready
  expect(sandbox.customers.count()).toBe(50)
})

it('starts from custom fixture accounts and customersPerAccount', async () => {
  const sandbox = createSandbox({
    customersPerAccount: 3,
    fixtures: {
      accounts: [
        {
          id: 'acct_MyTeamAccount1',
          name: 'My team',
          apiKeys: [{ key: 'sk_test_MyTeamKey000000000000001' }],
        },
      ],
    },
  })
  await sandbox.ready
  const state = sandbox.state()
  expect(state.accounts.map((a) => [a.id, a.name, a.customer_count])).toEqual([
    ['acct_MyTeamAccount1', 'My team', 3],
  ])
  expect(state.accounts[0]!.api_keys[0]!.key).toBe('sk_test_…0001')
})

describe('DEFAULTS, the one source of every default', () => {
  it('is what resolveOptions gives for no options', () => {
    const resolved = resolveOptions({})
    for (const [name, value] of Object.entries(DEFAULTS)) {
      expect(resolved[name as keyof typeof resolved], name).toEqual(value)
    }
  })

  it('is what --help and the ledger say', () => {
    expect(USAGE).toContain(
      `default=${DEFAULTS.expiresIn.default},min=${DEFAULTS.expiresIn.min},max=${DEFAULTS.expiresIn.max}`,
    )
    expect(USAGE).toContain(`records=${DEFAULTS.limits.records}`)
    const expiresIn = LEDGER.find((item) => item.id === 'token.expires-in')
    expect(expiresIn?.default).toContain(
      `default ${DEFAULTS.expiresIn.default}, from ${DEFAULTS.expiresIn.min} to ${DEFAULTS.expiresIn.max}`,
    )
  })
})
