import { execFile } from 'node:child_process'
import { mkdtemp, readFile, writeFile, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterEach, expect, it } from 'vitest'
import packageJson from '../package.json' with { type: 'json' }
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import { readDataFile } from '../src/model/data-file.ts'
import { spawnCli, type Spawned } from './_spawn.ts'

const running: Spawned[] = []
const folders: string[] = []

afterEach(async () => {
  for (const cli of running.splice(0)) {
    if (cli.child.exitCode === null && cli.child.signalCode === null) {
      cli.child.kill('SIGKILL')
      await cli.exited
    }
  }
  for (const folder of folders.splice(0))
    await rm(folder, { recursive: true, force: true })
})

const start = (args: string[], env?: Record<string, string>): Spawned => {
  const cli = spawnCli(args, env)
  running.push(cli)
  return cli
}

const tempFolder = async (): Promise<string> => {
  const folder = await mkdtemp(join(tmpdir(), 'cts-cli-'))
  folders.push(folder)
  return folder
}

const urlOf = async (cli: Spawned): Promise<string> =>
  (await cli.waitFor(/http:\/\/127\.0\.0\.1:\d+/))[0]

const createCustomer = (
  url: string,
  body: unknown = { name: 'Ada', email: 'ada@example.com' },
) =>
  fetch(`${url}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  })

it('prints the usage and exits 0 with --help', async () => {
  const cli = start(['--help'])
  expect(await cli.exited).toBe(0)
  expect(cli.stdout()).toMatch(/^Usage: customer-token-sandbox/)
  expect(cli.stdout()).toContain('--rate-limit N/WINDOW')
})

it('prints the version and exits 0 with --version', async () => {
  const cli = start(['--version'])
  expect(await cli.exited).toBe(0)
  expect(cli.stdout().trim()).toBe(packageJson.version)
})

it('exits 2 with one line and the usage for an unknown flag, without a stack trace', async () => {
  const cli = start(['--nope'])
  expect(await cli.exited).toBe(2)
  const [first, ...rest] = cli.stderr().split('\n')
  expect(first).toMatch(/^customer-token-sandbox: .*--nope/)
  expect(rest.join('\n')).toContain('Usage: customer-token-sandbox')
  expect(cli.stderr()).not.toMatch(/\n\s+at /)
})

it.each([
  [['--port', 'abc'], /--port must be a whole number/],
  [['--latency', 'fast'], /--latency must look like/],
  [['--rate-limit', '100'], /--rate-limit must look like/],
  [['--log-format', 'xml'], /--log-format must be one of pretty, json/],
  [['--expires-in', 'min=100,max=50'], /--expires-in min \(100\)/],
  [['--scopes', 'customers'], /--scopes \(entry 1\)/],
])('exits 2 naming the problem for %j', async (args, message) => {
  const cli = start(args)
  expect(await cli.exited).toBe(2)
  expect(cli.stderr()).toMatch(message)
  expect(cli.stderr()).not.toMatch(/\n\s+at /)
})

it.each([
  [
    ['--seed'],
    /^customer-token-sandbox: --seed needs a value: --seed <value>$/m,
  ],
  [
    ['--seed', '--port', '0'],
    /^customer-token-sandbox: --seed needs a value: --seed <value>$/m,
  ],
  [['--prot', '0'], /Unknown option '--prot'; did you mean --port\?/],
  [['--dat-file', 'x.json'], /did you mean --data-file\?/],
])(
  'exits 2 with a hint, not parseArgs wording, for %j',
  async (args, message) => {
    const cli = start(args)
    expect(await cli.exited).toBe(2)
    expect(cli.stderr()).toMatch(message)
    expect(cli.stderr()).not.toMatch(/ambiguous|\n\s+at /)
  },
)

it('refuses to listen beyond loopback without an admin token, exit 2', async () => {
  const cli = start(['--host', '0.0.0.0', '--port', '0'])
  expect(await cli.exited).toBe(2)
  expect(cli.stderr()).toMatch(
    /Refusing to listen on 0\.0\.0\.0 without an admin token/,
  )
})

it('guards /__sandbox/ with the admin token when listening beyond loopback', async () => {
  const token = 'an-admin-token-of-some-length'
  const cli = start([
    '--host',
    '0.0.0.0',
    '--port',
    '0',
    '--admin-token',
    token,
    '--quiet',
  ])
  const port = (await cli.waitFor(/http:\/\/0\.0\.0\.0:(\d+)/))[1]
  const url = `http://127.0.0.1:${port}`
  expect((await fetch(`${url}/__sandbox/health`)).status).toBe(200)
  expect((await fetch(`${url}/__sandbox/state`)).status).toBe(401)
  const wrong = await fetch(`${url}/__sandbox/state`, {
    headers: { authorization: 'Bearer not-the-admin-token' },
  })
  expect(wrong.status).toBe(401)
  const right = await fetch(`${url}/__sandbox/state`, {
    headers: { authorization: `Bearer ${token}` },
  })
  expect(right.status).toBe(200)
  expect((await createCustomer(url)).status).toBe(201)
})

it('exits 1 with a clear message when the port is in use', async () => {
  const blocker = createServer()
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
  const { port } = blocker.address() as { port: number }
  try {
    const cli = start(['--port', String(port)])
    expect(await cli.exited).toBe(1)
    expect(cli.stderr()).toContain(`Port ${port} is already in use`)
  } finally {
    blocker.close()
  }
})

it('prints a banner whose curl command creates a customer', async () => {
  const cli = start(['--port', '0'])
  const url = await urlOf(cli)
  await cli.waitFor(/Stop\s+Ctrl\+C/)
  const banner = cli.stdout()
  expect(banner).toContain(DEMO_KEY_ONE)
  expect(banner).toContain('sk_test_RevokedKeyForTheSandbox1')
  expect(banner).toContain(`${url}/__sandbox/state`)
  const curl = banner
    .split('\n')
    .find((line) =>
      line.trim().startsWith(`curl -sS -X POST ${url}/v1/customers`),
    )
  expect(curl).toBeDefined()
  const { stdout } = await promisify(execFile)('sh', [
    '-c',
    `${curl!.trim()} -w '\\n%{http_code}'`,
  ])
  const [body, status] = stdout.trim().split('\n')
  expect(status).toBe('201')
  expect(JSON.parse(body!)).toEqual({
    id: expect.stringMatching(/^cus_/),
    name: 'Ada Lovelace',
    email: 'ada@example.com',
  })
})

it('logs one line per request with the masked credential and never the secret', async () => {
  const cli = start(['--port', '0'])
  const url = await urlOf(cli)
  await createCustomer(url)
  const line = await cli.waitFor(/POST\s+\/v1\/customers 201 .*/)
  expect(line[0]).toContain('acct_DemoAccount001')
  expect(line[0]).toContain('sk_test_…0001')
  const after = cli.stdout().split('Stop')[1]!
  expect(after).not.toContain(DEMO_KEY_ONE)
})

it('writes JSON lines with --log-format json', async () => {
  const cli = start(['--port', '0', '--log-format', 'json'])
  const listening = JSON.parse(
    (await cli.waitFor(/^\{.*"event":"listening".*\}$/m))[0],
  )
  expect(listening).toMatchObject({
    event: 'listening',
    url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
    seed: 1,
  })
  await fetch(`${listening.url}/v1/customers`, { method: 'POST' })
  const request = JSON.parse(
    (await cli.waitFor(/^\{.*"event":"request".*\}$/m))[0],
  )
  expect(request).toMatchObject({
    method: 'POST',
    path: '/v1/customers',
    status: 401,
    code: 'missing_credentials',
  })
})

it('prints only the URL with --quiet', async () => {
  const cli = start(['--port', '0', '--quiet'])
  const url = await urlOf(cli)
  await createCustomer(url)
  await fetch(`${url}/__sandbox/health`)
  expect(cli.stdout().trim()).toBe(url)
})

it('reads options from --config, with flags taking precedence and PORT from the environment', async () => {
  const folder = await tempFolder()
  const config = join(folder, 'sandbox.config.json')
  await writeFile(
    config,
    JSON.stringify({
      seed: 7,
      customers: 3,
      uniqueEmail: true,
      quiet: true,
      port: 1,
    }),
  )
  const cli = start(['--config', config, '--customers', '2'], { PORT: '0' })
  const url = await urlOf(cli)
  const state = await (await fetch(`${url}/__sandbox/state`)).json()
  expect(state.seed).toBe(7)
  expect(state.customers).toHaveLength(4)
  const assumptions = (
    await (await fetch(`${url}/__sandbox/assumptions`)).json()
  ).assumptions
  expect(
    assumptions.find(
      (a: { id: string }) => a.id === 'customer.email-uniqueness',
    ).value,
  ).toBe(true)
})

it('exits 2 for a config file with an unknown option', async () => {
  const folder = await tempFolder()
  const config = join(folder, 'bad.json')
  await writeFile(config, JSON.stringify({ colour: 'blue' }))
  const cli = start(['--config', config])
  expect(await cli.exited).toBe(2)
  expect(cli.stderr()).toContain('unknown option "colour"')
})

it('applies the ledger options from flags', async () => {
  const cli = start([
    '--port',
    '0',
    '--quiet',
    '--rate-limit',
    '1/1h',
    '--expires-in',
    'default=120,min=60,max=600',
    '--no-v1-accepts-tokens',
  ])
  const url = await urlOf(cli)
  // An hour-long window: two calls a few ms apart never straddle its edge.
  expect((await createCustomer(url)).status).toBe(201)
  const limited = await createCustomer(url)
  expect(limited.status).toBe(429)
  expect(limited.headers.get('retry-after')).toMatch(/^\d+$/)
  const ledger = (await (await fetch(`${url}/__sandbox/assumptions`)).json())
    .assumptions
  const value = (id: string) =>
    ledger.find((a: { id: string }) => a.id === id).value
  expect(value('token.expires-in')).toEqual({ default: 120, min: 60, max: 600 })
  expect(value('auth.v1-accepts-tokens')).toBe(false)
})

it(
  'shows how long seeding took for a large --customers count',
  {
    timeout: 30_000,
  },
  async () => {
    const cli = start([
      '--port',
      '0',
      '--customers',
      '10000',
      '--limits',
      'customersPerAccount=10001',
    ])
    await urlOf(cli)
    expect(cli.stdout()).toMatch(/Seeded 20,000 customers in \d+\.\d s/)
    const state = await (
      await fetch(`${await urlOf(cli)}/__sandbox/state`)
    ).json()
    expect(state.customers).toHaveLength(20_000)
  },
)

it('keeps data across restarts with --data-file and flushes it on SIGTERM', async () => {
  const folder = await tempFolder()
  const file = join(folder, 'data.json')
  const first = start(['--port', '0', '--quiet', '--data-file', file])
  const url = await urlOf(first)
  const created = await (
    await createCustomer(url, { name: 'Grace', email: 'grace@example.com' })
  ).json()
  const token = await (
    await fetch(`${url}/v2/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEMO_KEY_ONE}` },
      body: JSON.stringify({ scopes: ['customers:write'] }),
    })
  ).json()
  first.child.kill('SIGTERM')
  expect(await first.exited).toBe(0)
  const saved = (await readDataFile(file)) as {
    customers: { id: string }[]
  }
  expect(saved).toMatchObject({
    format: 'customer-token-sandbox/data',
    version: 1,
  })
  expect(saved.customers.map((c: { id: string }) => c.id)).toContain(created.id)

  const second = start(['--port', '0', '--quiet', '--data-file', file])
  const url2 = await urlOf(second)
  const state = await (await fetch(`${url2}/__sandbox/state`)).json()
  expect(
    state.customers.find((c: { id: string }) => c.id === created.id),
  ).toMatchObject({ name: 'Grace' })
  const withToken = await fetch(`${url2}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token.token}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name: 'Via token', email: 'token@example.com' }),
  })
  expect(withToken.status).toBe(201)
})

it('creates a missing data file at start', async () => {
  const folder = await tempFolder()
  const file = join(folder, 'new.json')
  const cli = start(['--port', '0', '--quiet', '--data-file', file])
  await urlOf(cli)
  const saved = (await readDataFile(file)) as { customers: unknown[] }
  expect(saved.customers).toHaveLength(50)
})

it.each([
  ['not JSON', '{"format": "customer-token-sandbox/da', /is not valid JSON/],
  [
    'another version',
    JSON.stringify({ format: 'customer-token-sandbox/data', version: 99 }),
    /version 99 of the format/,
  ],
  ['another document', JSON.stringify({ hello: 'world' }), /cannot be used/],
])(
  'refuses a data file that is %s, exit 1, and leaves it untouched',
  async (_, content, message) => {
    const folder = await tempFolder()
    const file = join(folder, 'data.json')
    await writeFile(file, content)
    const cli = start(['--port', '0', '--data-file', file])
    expect(await cli.exited).toBe(1)
    expect(cli.stderr()).toMatch(message)
    expect(cli.stderr()).not.toMatch(/\n\s+at /)
    expect(await readFile(file, 'utf8')).toBe(content)
  },
)

it('starts from an exported session with --from and goes on making the same ids', async () => {
  const folder = await tempFolder()
  const first = start(['--port', '0', '--quiet', '--deterministic'])
  const url = await urlOf(first)
  await fetch(`${url}/__sandbox/clock`, {
    method: 'POST',
    body: JSON.stringify({ now: '2030-01-01T00:00:00Z' }),
  })
  await createCustomer(url, { name: 'Before', email: 'before@example.com' })
  const session = join(folder, 'session.json')
  await writeFile(
    session,
    await (await fetch(`${url}/__sandbox/export?secrets=include`)).text(),
  )
  const next = await (
    await createCustomer(url, { name: 'Next', email: 'next@example.com' })
  ).json()

  const replay = start(['--port', '0', '--quiet', '--from', session])
  const url2 = await urlOf(replay)
  const state = await (await fetch(`${url2}/__sandbox/state`)).json()
  expect(
    state.customers.some((c: { name: string }) => c.name === 'Before'),
  ).toBe(true)
  expect(state.now).toBe('2030-01-01T00:00:00.000Z')
  const again = await (
    await createCustomer(url2, { name: 'Next', email: 'next@example.com' })
  ).json()
  expect(again).toEqual(next)
})

it('lists the persona keys in the banner', async () => {
  const cli = start(['--port', '0'])
  await cli.waitFor(/Stop\s+Ctrl\+C/)
  expect(cli.stdout()).toContain(
    'sk_test_PersonaUnavailable503000  persona: every call is a 503',
  )
  expect(cli.stdout()).toContain(
    'sk_test_PersonaReadOnlyKey000001  persona: no customers:write',
  )
})
