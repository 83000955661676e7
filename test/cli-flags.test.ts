import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { captureOutput, runMain } from './_servers.ts'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { main, readCommandLine } from '../src/cli/cli.ts'
import {
  FLAG_ROWS,
  FLAG_TABLE,
  SERVER_KEYS,
  flagLabel,
  type FlagName,
} from '../src/cli/flags.ts'
import { DEFAULTS, SERVER_DEFAULTS } from '../src/defaults.ts'
import { resolveOptions } from '../src/options.ts'

/**
 * One value per option, as a flag's arguments and as a config file's value,
 * each different from the default so that a value that is dropped shows.
 */
const EXAMPLES: Partial<Record<FlagName, [string[], unknown]>> = {
  port: [['--port', '4321'], 4321],
  host: [['--host', '127.0.0.2'], '127.0.0.2'],
  adminToken: [['--admin-token', 'a-token-of-sixteen+'], 'a-token-of-sixteen+'],
  adminOrigins: [
    ['--admin-origins', 'https://a.test,https://b.test'],
    ['https://a.test', 'https://b.test'],
  ],
  allowedHosts: [['--allowed-hosts', 'sandbox.internal'], ['sandbox.internal']],
  headersTimeout: [['--headers-timeout', '2000'], 2000],
  requestTimeout: [['--request-timeout', '3000'], 3000],
  keepAliveTimeout: [['--keep-alive-timeout', '4000'], 4000],
  sendTimeout: [['--send-timeout', '5000'], 5000],
  maxHeadersCount: [['--max-headers-count', '50'], 50],
  maxConnections: [['--max-connections', '64'], 64],
  dataFile: [['--data-file', 'sandbox.jsonl'], 'sandbox.jsonl'],
  store: [['--store', 'redis://127.0.0.1:6379/0'], 'redis://127.0.0.1:6379/0'],
  logFormat: [['--log-format', 'json'], 'json'],
  quiet: [['--quiet'], true],
  seed: [['--seed', '42'], 42],
  customersPerAccount: [['--customers', '3'], 3],
  deterministic: [['--deterministic'], true],
  latency: [['--latency', '50-200ms'], { min: 50, max: 200 }],
  rateLimit: [['--rate-limit', '10/m'], { limit: 10, windowSeconds: 60 }],
  unknownFields: [['--unknown-fields', 'ignore'], 'ignore'],
  requiredFields: [['--required-fields', 'email'], ['email']],
  nameLength: [['--name-length', '2-100'], { min: 2, max: 100 }],
  emailMaxLength: [['--email-max-length', '120'], 120],
  uniqueEmail: [['--unique-email'], true],
  scopes: [
    ['--scopes', 'customers:read,invoices:read'],
    ['customers:read', 'invoices:read'],
  ],
  maxScopes: [['--max-scopes', '5'], 5],
  expiresIn: [
    ['--expires-in', 'default=120,min=60,max=600'],
    { default: 120, min: 60, max: 600 },
  ],
  v1AcceptsTokens: [['--no-v1-accepts-tokens'], false],
  tokenIssuers: [['--token-issuers', 'api-keys'], 'api-keys'],
  maxBodyBytes: [['--max-body-bytes', '2048'], 2048],
  clockAfterSet: [['--clock-after-set', 'running'], 'running'],
  journalLimit: [['--journal-limit', '10'], 10],
  limits: [
    ['--limits', 'records=500,accounts=5'],
    { records: 500, accounts: 5 },
  ],
  idempotency: [['--idempotency', 'ttlSeconds=60'], { ttlSeconds: 60 }],
}

let folder: string
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'cts-flags-'))
})
afterAll(async () => {
  await rm(folder, { recursive: true, force: true })
})

let files = 0
const configFile = async (config: Record<string, unknown>): Promise<string> => {
  const file = join(folder, `config-${files++}.json`)
  await writeFile(file, JSON.stringify(config))
  return file
}

/** Where the command line put an option: the server's options or the CLI's settings. */
const valueOf = async (name: FlagName, args: string[]): Promise<unknown> => {
  const { options, settings } = await readCommandLine(args, {})
  const where: Record<string, unknown> =
    FLAG_TABLE[name as keyof typeof FLAG_TABLE].target === 'cli'
      ? { ...settings }
      : { ...options }
  return where[name]
}

const kebab = (name: string): string =>
  name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)

it.each(FLAG_ROWS.filter(([, row]) => row.flag && row.config))(
  'sets %s to one value from its flag and from a config file',
  async (name) => {
    const example = EXAMPLES[name]
    expect(example, `EXAMPLES has no value for ${name}`).toBeDefined()
    const [args, value] = example!
    const fromFlag = await valueOf(name, args)
    expect(fromFlag).toEqual(value)
    expect(
      await valueOf(name, ['--config', await configFile({ [name]: value })]),
    ).toEqual(fromFlag)
  },
)

it.each(FLAG_ROWS.filter(([, row]) => row.flag && !row.config))(
  'refuses %s in a config file, as the table says',
  async (name) => {
    const file = await configFile({ [name]: 'x' })
    await expect(readCommandLine(['--config', file], {})).rejects.toThrow(
      `unknown option "${name}"`,
    )
  },
)

it.each(FLAG_ROWS.filter(([, row]) => !row.flag))(
  'takes %s from a config file only, as the table says',
  async (name) => {
    await expect(
      readCommandLine([`--${kebab(name)}`, '1'], {}),
    ).rejects.toThrow(/Unknown option/)
    const file = await configFile({ [name]: 1 })
    const { options } = await readCommandLine(['--config', file], {})
    expect((options as Record<string, unknown>)[name]).toBe(1)
  },
)

it('reads a config file in the flag forms it allows (customers, "10/m", "50-200ms")', async () => {
  const file = await configFile({
    customers: 4,
    rateLimit: '10/m',
    latency: '50-200ms',
  })
  const { options } = await readCommandLine(['--config', file], {})
  expect(options).toMatchObject({
    customersPerAccount: 4,
    rateLimit: { limit: 10, windowSeconds: 60 },
    latency: { min: 50, max: 200 },
  })
})

it('takes the environment over a config file and a flag over both', async () => {
  const file = await configFile({ port: 1, seed: 2 })
  const { options } = await readCommandLine(['--config', file, '--seed', '9'], {
    PORT: '0',
    SANDBOX_SEED: '5',
  })
  expect(options).toMatchObject({ port: 0, seed: 9 })
})

it('refuses a switch in a config file that is not true or false', async () => {
  const file = await configFile({ quiet: 'yes' })
  await expect(readCommandLine(['--config', file], {})).rejects.toThrow(
    '"quiet" must be true or false',
  )
})

it('lists every flag of the table in --help', async () => {
  const output = captureOutput()
  const { exitCode } = await main({
    args: ['--help'],
    stdout: output.stream,
    env: {},
  })
  expect(exitCode).toBe(0)
  const labels = FLAG_ROWS.flatMap(([, row]) => flagLabel(row) ?? [])
  expect(labels.length).toBeGreaterThan(30)
  for (const label of labels) expect(output.text()).toContain(`  ${label}`)
  for (const [, row] of FLAG_ROWS) {
    if (row.env !== undefined) expect(output.text()).toContain(`env ${row.env}`)
  }
})

it('shows the defaults of DEFAULTS and SERVER_DEFAULTS, and has a row for each', () => {
  const defaults: Record<string, unknown> = { ...DEFAULTS, ...SERVER_DEFAULTS }
  for (const name of Object.keys(defaults)) {
    expect(Object.keys(FLAG_TABLE), name).toContain(name)
  }
  for (const [name, row] of FLAG_ROWS) {
    if (row.default === undefined || row.target === 'cli') continue
    expect(row.default, name).toEqual(defaults[name])
  }
})

it('leaves only sandbox options for verify and record (SERVER_KEYS)', () => {
  const sandboxOptions = Object.keys(resolveOptions())
  for (const [name, row] of FLAG_ROWS) {
    if (!row.config) continue
    if (SERVER_KEYS.has(name)) expect(row.target, name).not.toBe('sandbox')
    else expect(sandboxOptions, name).toContain(name)
  }
})

/**
 * Values out of the bounds of every flag that takes a number, beside what
 * its parser accepts: `--rate-limit 0/m` passed the parser and met the
 * option's schema, which said "--rate-limit limit expected number to be
 * >=1." (zod's words) and then "Run … --help", not the usage.
 */
const BIG = '999999999999999'
const OUT_OF_RANGE: Partial<Record<FlagName, string[]>> = {
  port: [BIG],
  headersTimeout: ['0', BIG],
  requestTimeout: ['0', BIG],
  keepAliveTimeout: ['0', BIG],
  sendTimeout: ['0', BIG],
  maxHeadersCount: ['0', BIG],
  maxConnections: ['0', BIG],
  seed: [BIG],
  customersPerAccount: [BIG],
  latency: [BIG, `0-${BIG}`],
  rateLimit: ['0/m', '1/0s'],
  nameLength: ['0-0'],
  emailMaxLength: ['0'],
  maxScopes: ['0', BIG],
  expiresIn: ['min=0', 'default=0', 'max=0', '0-1'],
  maxBodyBytes: ['0', BIG],
  journalLimit: ['0'],
  limits: Object.keys(DEFAULTS.limits).map((key) => `${key}=0`),
  idempotency: Object.keys(DEFAULTS.idempotency).map((key) => `${key}=0`),
}

it('has out-of-range values for every flag that takes a number', () => {
  // N, MS, SPEC, N/WINDOW, MIN-MAX, MIN[-MAX]ms, and key=N pairs.
  const numeric = FLAG_ROWS.filter(
    ([, row]) =>
      row.parse !== undefined &&
      (/^(?:N|MS|SPEC)$|MIN|\//.test(row.value ?? '') || row.merge === true),
  ).map(([name]) => name)
  expect(numeric.toSorted()).toEqual(Object.keys(OUT_OF_RANGE).toSorted())
})

it.each(
  Object.entries(OUT_OF_RANGE).flatMap(([name, values]) =>
    values!.map((value) => [
      (FLAG_TABLE as Record<string, { flag?: string }>)[name]!.flag!,
      value,
    ]),
  ),
)(
  'refuses --%s %s in one sentence of its own and the usage, exit 2',
  async (flag, value) => {
    const [stderr, code] = await runMain([
      '--port',
      '0',
      '--quiet',
      `--${flag}`,
      value,
    ])
    expect(code).toBe(2)
    const [first, blank, usage] = stderr.split('\n')
    expect(first).toMatch(
      new RegExp(`^customer-token-sandbox: --${flag}\\b.* must be .*, not `),
    )
    expect(first).not.toMatch(/expected|>=|<=|Too (?:small|big)/)
    expect(blank).toBe('')
    expect(usage).toMatch(/^Usage: customer-token-sandbox /)
  },
)
