import { readFile } from 'node:fs/promises'
import { parseArgs, styleText } from 'node:util'
import packageJson from '../../package.json' with { type: 'json' }
import { DEFAULT_ACCOUNTS, DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { DataFileError } from '../model/data-file.ts'
import { DEFAULTS } from '../defaults.ts'
import { SERVER_KEYS } from './verify/config.ts'
import type { Persona } from '../model/personas.ts'
import type {
  RequestLog,
  SandboxServer,
  SandboxServerOptions,
} from '../runtimes/node.ts'

const NAME = 'customer-token-sandbox'

/** `{ a: 1, b: 2 }` as the CLI reads it: `a=1,b=2`. */
const pairs = (values: Record<string, number>): string =>
  Object.entries(values)
    .map(([key, value]) => `${key}=${value}`)
    .join(',')

/** Where the CLI writes; tests pass their own. */
export interface CliIO {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number }
  stderr: NodeJS.WritableStream
  env: Record<string, string | undefined>
}

/** Options of `main()`. */
export interface MainOptions extends Partial<CliIO> {
  /** The arguments after the program's name. @default process.argv.slice(2) */
  args?: string[]
}

/** What `main()` leaves running, if anything. */
export interface MainResult {
  /** Set when the CLI is done: the process should exit with it. */
  exitCode?: number
  /** Set when a server is running. */
  server?: SandboxServer
  /** Set when `record` is running: close it to stop. */
  recorder?: { url: string; close(): Promise<void> }
}

export const USAGE = `Usage: ${NAME} [options]
       ${NAME} verify --target URL --key KEY   check the assumptions against a live service
       ${NAME} record --target URL             record a live service's answers (see --help of each)

Serves the Customer and Token Service sandbox over HTTP.

Server
  --port N                 port, 0 for a free one (default 4100, env PORT)
  --host HOST              interface (default 127.0.0.1, env HOST); beyond loopback needs --admin-token
  --admin-token TOKEN      guards /__sandbox/* (env SANDBOX_ADMIN_TOKEN, at least 16 characters)
  --admin-origins LIST     origins besides loopback ones that may call /__sandbox/* from a browser
  --allowed-hosts LIST     Host names besides loopback ones that /__sandbox/* answers on loopback
  --headers-timeout MS     time to send a request's headers, then 408 (default 10000)
  --request-timeout MS     time to send a whole request, then 408 (default 30000)
  --keep-alive-timeout MS  idle keep-alive connections close after this (default 5000)
  --max-headers-count N    most header fields per request, then 431 (default 100)
  --max-connections N      most open connections; more are closed at once (default 1024)
  --data-file PATH         keep the data in a file: each write is on disk before its 201; one server per file (env SANDBOX_DATA_FILE)
  --from FILE              start from a session that GET /__sandbox/export wrote (replays it exactly)
  --config FILE            read options from a JSON file (same names as the JavaScript options)
  --log-format pretty|json request log format (default pretty, env SANDBOX_LOG_FORMAT)
  --quiet                  print the URL only, no banner and no request log
  --debug                  print the stack of an internal error (env SANDBOX_DEBUG=1)
  -h, --help               show this help
  -v, --version            show the version

Data
  --seed N                 faker seed for the seeded data (default ${DEFAULTS.seed}, env SANDBOX_SEED)
  --customers N            seeded customers per fixture account (default ${DEFAULTS.customersPerAccount})
  --deterministic          reproducible ids and secrets from the seed (default off for the server)

Behaviour (the assumption ledger: GET /__sandbox/assumptions)
  --latency MIN[-MAX]ms    latency added to every API call, e.g. 50-200ms
  --rate-limit N/WINDOW    per-credential limit, e.g. 100/60s, 10/m, 1000/h
  --unknown-fields reject|ignore      request fields the interface does not define (default ${DEFAULTS.unknownFields})
  --required-fields LIST   customer fields a request must carry (default ${DEFAULTS.requiredFields.join(',')})
  --name-length MIN-MAX    name length as sent, in characters (default ${DEFAULTS.nameLength.min}-${DEFAULTS.nameLength.max})
  --email-max-length N     longest email (default ${DEFAULTS.emailMaxLength})
  --unique-email           409 email_taken for a duplicate email within an account
  --scopes LIST            the scope catalog (default ${DEFAULTS.scopes.join(',')})
  --max-scopes N           most scopes per token (default ${DEFAULTS.maxScopes})
  --expires-in SPEC        ${pairs(DEFAULTS.expiresIn)} (or a default alone, or MIN-MAX)
  --no-v1-accepts-tokens   POST /v1/customers takes API keys only
  --token-issuers api-keys|api-keys-and-tokens   who may mint tokens (default ${DEFAULTS.tokenIssuers})
  --max-body-bytes N       largest request body (default ${DEFAULTS.maxBodyBytes})
  --clock-after-set frozen|running    the clock once set or advanced (default ${DEFAULTS.clockAfterSet})
  --journal-limit N        requests the journal keeps (default ${DEFAULTS.journalLimit})

Limits (at a limit: 409 limit_reached naming it)
  --limits LIST            caps on the stores; the defaults:
                           ${pairs(DEFAULTS.limits)}
  --idempotency LIST       Idempotency-Key window and live keys kept; the defaults:
                           ${pairs(DEFAULTS.idempotency)}
`

/** A mistake in the command line or config: one line, the usage, exit 2. */
class UsageError extends Error {}

const FLAGS = {
  port: { type: 'string' },
  host: { type: 'string' },
  'admin-token': { type: 'string' },
  'admin-origins': { type: 'string' },
  'allowed-hosts': { type: 'string' },
  'headers-timeout': { type: 'string' },
  'request-timeout': { type: 'string' },
  'keep-alive-timeout': { type: 'string' },
  'max-headers-count': { type: 'string' },
  'max-connections': { type: 'string' },
  debug: { type: 'boolean' },
  'data-file': { type: 'string' },
  from: { type: 'string' },
  config: { type: 'string' },
  'log-format': { type: 'string' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
  seed: { type: 'string' },
  customers: { type: 'string' },
  deterministic: { type: 'boolean' },
  latency: { type: 'string' },
  'rate-limit': { type: 'string' },
  'unknown-fields': { type: 'string' },
  'required-fields': { type: 'string' },
  'name-length': { type: 'string' },
  'email-max-length': { type: 'string' },
  'unique-email': { type: 'boolean' },
  scopes: { type: 'string' },
  'max-scopes': { type: 'string' },
  'expires-in': { type: 'string' },
  'v1-accepts-tokens': { type: 'boolean' },
  'token-issuers': { type: 'string' },
  'max-body-bytes': { type: 'string' },
  'clock-after-set': { type: 'string' },
  'journal-limit': { type: 'string' },
  limits: { type: 'string' },
  idempotency: { type: 'string' },
} as const

const int = (name: string, value: string): number => {
  if (!/^\d{1,15}$/.test(value.trim()))
    throw new UsageError(`--${name} must be a whole number (got "${value}")`)
  return Number(value)
}

const oneOf = <T extends string>(
  name: string,
  value: string,
  choices: readonly T[],
): T => {
  if (!choices.includes(value as T)) {
    throw new UsageError(
      `--${name} must be one of ${choices.join(', ')} (got "${value}")`,
    )
  }
  return value as T
}

const list = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)

/**
 * Reads `MIN[-MAX]ms`, e.g. `50-200ms` or `100`.
 *
 * @example
 * parseLatency('50-200ms') // { min: 50, max: 200 }
 */
export function parseLatency(value: string): { min: number; max: number } {
  const match = /^(\d+)(?:\s*-\s*(\d+))?\s*(?:ms)?$/.exec(value.trim())
  if (!match)
    throw new UsageError(
      `--latency must look like 100ms or 50-200ms (got "${value}")`,
    )
  const min = Number(match[1])
  return { min, max: match[2] === undefined ? min : Number(match[2]) }
}

const UNITS: Record<string, number> = {
  s: 1,
  sec: 1,
  second: 1,
  m: 60,
  min: 60,
  minute: 60,
  h: 3600,
  hour: 3600,
}

/**
 * Reads `N/WINDOW`, e.g. `100/60s`, `10/m`, `1000/1h`.
 *
 * @example
 * parseRateLimit('100/60s') // { limit: 100, windowSeconds: 60 }
 */
export function parseRateLimit(value: string): {
  limit: number
  windowSeconds: number
} {
  const match = /^(\d+)\s*\/\s*(\d+)?\s*([a-z]+)?$/.exec(value.trim())
  const unit = match?.[3] === undefined ? 1 : UNITS[match[3]]
  if (
    !match ||
    unit === undefined ||
    (match[2] === undefined && match[3] === undefined)
  ) {
    throw new UsageError(
      `--rate-limit must look like 100/60s, 10/m or 1000/1h (got "${value}")`,
    )
  }
  return {
    limit: Number(match[1]),
    windowSeconds: Number(match[2] ?? 1) * unit,
  }
}

const parseBounds = (
  name: string,
  value: string,
  keys: readonly string[],
  single?: string,
): Record<string, number> => {
  const range = /^(\d+)\s*-\s*(\d+)$/.exec(value.trim())
  if (range) return { min: Number(range[1]), max: Number(range[2]) }
  if (single && /^\d+$/.test(value.trim())) return { [single]: Number(value) }
  const out: Record<string, number> = {}
  for (const part of list(value)) {
    const [key, raw] = part.split('=').map((s) => s.trim())
    if (
      key === undefined ||
      !keys.includes(key) ||
      raw === undefined ||
      !/^\d+$/.test(raw)
    ) {
      throw new UsageError(
        `--${name} must look like ${keys.map((k) => `${k}=N`).join(',')} or MIN-MAX (got "${value}")`,
      )
    }
    out[key] = Number(raw)
  }
  return out
}

/**
 * Reads `key=N` pairs joined with commas, e.g. `records=300000,accounts=100`.
 *
 * @example
 * parsePairs('limits', 'records=300000', ['records']) // { records: 300000 }
 */
export function parsePairs(
  name: string,
  value: string,
  keys: readonly string[],
): Record<string, number> {
  const out: Record<string, number> = {}
  for (const part of list(value)) {
    const [key, raw] = part.split('=').map((s) => s.trim())
    if (key === undefined || !keys.includes(key) || raw === undefined) {
      throw new UsageError(
        `--${name} takes key=N pairs joined with commas, the keys being ${keys.join(', ')} (got "${value}")`,
      )
    }
    out[key] = int(`${name} ${key}`, raw)
  }
  return out
}

/** Settings of the CLI beyond the server's options. */
interface CliSettings {
  logFormat: 'pretty' | 'json'
  quiet: boolean
}

/** What a config file may hold: the server's options and the sandbox's. */
const CONFIG_KEYS = new Set([
  ...SERVER_KEYS,
  'seed',
  'customers',
  'customersPerAccount',
  'deterministic',
  'latency',
  'rateLimit',
  'unknownFields',
  'requiredFields',
  'nameLength',
  'emailMaxLength',
  'uniqueEmail',
  'scopes',
  'maxScopes',
  'expiresIn',
  'v1AcceptsTokens',
  'tokenIssuers',
  'maxBodyBytes',
  'clockAfterSet',
  'journalLimit',
  'idempotency',
  'limits',
  'fixtures',
])

async function readJsonFile(flag: string, path: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw new UsageError(
      `cannot read ${flag} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    )
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new UsageError(
      `${flag} ${path} is not valid JSON: ${(error as Error).message}`,
    )
  }
}

/**
 * Reads a `--config` file: a JSON object of options with their JavaScript names.
 *
 * @example
 * const options = await readConfig('sandbox.config.json')
 */
export async function readConfig(
  path: string,
): Promise<Record<string, unknown>> {
  const config = await readJsonFile('--config', path)
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new UsageError(`--config ${path} must hold a JSON object of options`)
  }
  for (const key of Object.keys(config)) {
    if (!CONFIG_KEYS.has(key))
      throw new UsageError(`--config ${path}: unknown option "${key}"`)
  }
  const out = { ...(config as Record<string, unknown>) }
  if (typeof out.latency === 'string') out.latency = parseLatency(out.latency)
  if (typeof out.rateLimit === 'string')
    out.rateLimit = parseRateLimit(out.rateLimit)
  if (out.customers !== undefined) {
    out.customersPerAccount = out.customers
    delete out.customers
  }
  return out
}

async function resolveSettings(
  args: string[],
  env: CliIO['env'],
): Promise<{
  help?: true
  version?: true
  options?: SandboxServerOptions
  settings?: CliSettings
}> {
  let values: ReturnType<
    typeof parseArgs<{ options: typeof FLAGS; allowNegative: true }>
  >['values']
  try {
    values = parseArgs({
      args,
      options: FLAGS,
      strict: true,
      allowPositionals: false,
      allowNegative: true,
    }).values
  } catch (error) {
    throw new UsageError(describeParseError(error as Error & { code?: string }))
  }
  if (values.help) return { help: true }
  if (values.version) return { version: true }

  const config =
    values.config === undefined ? {} : await readConfig(values.config)
  const options: SandboxServerOptions & Record<string, unknown> = { ...config }
  const settings: CliSettings = {
    logFormat: config.logFormat === 'json' ? 'json' : 'pretty',
    quiet: config.quiet === true,
  }
  delete options.logFormat
  delete options.quiet

  // Environment variables sit between the config file and the flags.
  const fromEnv: Partial<Record<keyof typeof FLAGS, string>> = {
    port: env.PORT,
    host: env.HOST,
    'admin-token': env.SANDBOX_ADMIN_TOKEN,
    'data-file': env.SANDBOX_DATA_FILE,
    'log-format': env.SANDBOX_LOG_FORMAT,
    seed: env.SANDBOX_SEED,
  }
  const v: Record<string, string | boolean | undefined> = {}
  for (const [key, value] of Object.entries(fromEnv))
    if (value !== undefined && value !== '') v[key] = value
  Object.assign(v, values)
  const str = (key: keyof typeof FLAGS): string | undefined =>
    v[key] as string | undefined

  if (str('from') !== undefined)
    options.from = await readJsonFile('--from', str('from')!)
  if (str('port') !== undefined) options.port = int('port', str('port')!)
  if (str('host') !== undefined) options.host = str('host')!
  if (str('admin-token') !== undefined) options.adminToken = str('admin-token')!
  if (str('data-file') !== undefined) options.dataFile = str('data-file')!
  if (str('admin-origins') !== undefined)
    options.adminOrigins = list(str('admin-origins')!)
  if (str('allowed-hosts') !== undefined)
    options.allowedHosts = list(str('allowed-hosts')!)
  for (const [flag, option] of [
    ['headers-timeout', 'headersTimeout'],
    ['request-timeout', 'requestTimeout'],
    ['keep-alive-timeout', 'keepAliveTimeout'],
    ['max-headers-count', 'maxHeadersCount'],
    ['max-connections', 'maxConnections'],
  ] as const) {
    if (str(flag) !== undefined) options[option] = int(flag, str(flag)!)
  }
  // @note Read where the error is reported (src/cli/report.ts), in this process.
  if (v.debug) process.env.SANDBOX_DEBUG = '1'
  if (str('log-format') !== undefined)
    settings.logFormat = oneOf('log-format', str('log-format')!, [
      'pretty',
      'json',
    ] as const)
  if (v.quiet) settings.quiet = true
  if (str('seed') !== undefined) options.seed = int('seed', str('seed')!)
  if (str('customers') !== undefined)
    options.customersPerAccount = int('customers', str('customers')!)
  if (v.deterministic !== undefined)
    options.deterministic = v.deterministic as boolean
  if (str('latency') !== undefined)
    options.latency = parseLatency(str('latency')!)
  if (str('rate-limit') !== undefined)
    options.rateLimit = parseRateLimit(str('rate-limit')!)
  if (str('unknown-fields') !== undefined)
    options.unknownFields = oneOf('unknown-fields', str('unknown-fields')!, [
      'reject',
      'ignore',
    ] as const)
  if (str('required-fields') !== undefined) {
    options.requiredFields = list(str('required-fields')!).map((f) =>
      oneOf('required-fields', f, ['name', 'email'] as const),
    )
  }
  if (str('name-length') !== undefined)
    options.nameLength = parseBounds('name-length', str('name-length')!, [
      'min',
      'max',
    ])
  if (str('email-max-length') !== undefined)
    options.emailMaxLength = int('email-max-length', str('email-max-length')!)
  if (v['unique-email'] !== undefined)
    options.uniqueEmail = v['unique-email'] as boolean
  if (str('scopes') !== undefined) options.scopes = list(str('scopes')!)
  if (str('max-scopes') !== undefined)
    options.maxScopes = int('max-scopes', str('max-scopes')!)
  if (str('expires-in') !== undefined) {
    options.expiresIn = parseBounds(
      'expires-in',
      str('expires-in')!,
      ['default', 'min', 'max'],
      'default',
    )
  }
  if (v['v1-accepts-tokens'] !== undefined)
    options.v1AcceptsTokens = v['v1-accepts-tokens'] as boolean
  if (str('token-issuers') !== undefined) {
    options.tokenIssuers = oneOf('token-issuers', str('token-issuers')!, [
      'api-keys',
      'api-keys-and-tokens',
    ] as const)
  }
  if (str('max-body-bytes') !== undefined)
    options.maxBodyBytes = int('max-body-bytes', str('max-body-bytes')!)
  if (str('clock-after-set') !== undefined) {
    options.clockAfterSet = oneOf('clock-after-set', str('clock-after-set')!, [
      'frozen',
      'running',
    ] as const)
  }
  if (str('journal-limit') !== undefined)
    options.journalLimit = int('journal-limit', str('journal-limit')!)
  if (str('limits') !== undefined) {
    options.limits = {
      ...options.limits,
      ...parsePairs('limits', str('limits')!, [
        'customersPerAccount',
        'tokensPerAccount',
        'records',
        'accounts',
        'scenarios',
        'snapshots',
      ]),
    }
  }
  if (str('idempotency') !== undefined) {
    options.idempotency = {
      ...options.idempotency,
      ...parsePairs('idempotency', str('idempotency')!, [
        'ttlSeconds',
        'maxEntries',
        'maxEntriesPerAccount',
      ]),
    }
  }
  return { options, settings }
}

/**
 * Runs the CLI: parses `args`, starts the server and prints the banner.
 * Errors are caught here once and printed as one line.
 *
 * @example
 * const { server, exitCode } = await main({ args: ['--port', '0', '--quiet'] })
 * await server?.close()
 */
export async function main({
  args = process.argv.slice(2),
  stdout = process.stdout,
  stderr = process.stderr,
  env = process.env,
}: MainOptions = {}): Promise<MainResult> {
  if (args[0] === 'verify' || args[0] === 'record') {
    // @note Loaded only for these commands: serving stays as it was.
    const { runCommand } = await import('./verify/cli.ts')
    return runCommand(args[0], args.slice(1), { stdout, stderr, env })
  }
  const color =
    Boolean(stdout.isTTY) &&
    env.NO_COLOR === undefined &&
    env.FORCE_COLOR !== '0'
  const paint = (
    format: Parameters<typeof styleText>[0],
    text: string,
  ): string => (color ? styleText(format, text) : text)
  let resolved: Awaited<ReturnType<typeof resolveSettings>>
  try {
    resolved = await resolveSettings(args, env)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    stderr.write(`${NAME}: ${error.message}\n\n${USAGE}`)
    return { exitCode: 2 }
  }
  if (resolved.help) {
    stdout.write(USAGE)
    return { exitCode: 0 }
  }
  if (resolved.version) {
    stdout.write(`${packageJson.version}\n`)
    return { exitCode: 0 }
  }
  const options = resolved.options!
  const settings = resolved.settings!
  const json = settings.logFormat === 'json'
  const line = (record: Record<string, unknown>): void => {
    stdout.write(
      `${JSON.stringify({ time: new Date().toISOString(), ...record })}\n`,
    )
  }

  // @note Loaded only to serve: --help and --version stay instant.
  const { createSandboxServer, SandboxStartError } =
    await import('../runtimes/node.ts')
  const progress = createProgress(stdout, json || settings.quiet, paint)
  let server: SandboxServer
  try {
    server = await createSandboxServer({
      ...options,
      onSeedProgress: progress.update,
      ...(!settings.quiet && {
        onLog: json
          ? (log: RequestLog) => line({ event: 'request', ...log })
          : (log: RequestLog) => stdout.write(formatLog(log, paint)),
      }),
      ...(json && {
        onFlush: (info) =>
          line({
            event: 'flush',
            snapshot_at: info.snapshotAt,
            customers: info.customers,
            tokens: info.tokens,
            bytes: info.bytes,
          }),
      }),
    })
  } catch (error) {
    progress.done()
    if (error instanceof SandboxStartError) {
      stderr.write(`${NAME}: ${error.message}\n`)
      return { exitCode: error.exitCode }
    }
    if (error instanceof DataFileError) {
      stderr.write(`${NAME}: ${error.message}\n`)
      return { exitCode: 1 }
    }
    if (error instanceof TypeError || error instanceof RangeError) {
      // A bad option value: createSandbox says which and how to fix it.
      stderr.write(
        `${NAME}: ${error.message.replace(/^Failed to create a sandbox: /, '')}\n\nRun ${NAME} --help for the options.\n`,
      )
      return { exitCode: 2 }
    }
    throw error
  }
  progress.done()

  if (json) {
    line({
      event: 'listening',
      url: server.url,
      seed: server.sandbox.state().seed,
      demo_key: DEMO_KEY_ONE,
      data_file: options.dataFile ?? null,
      loaded_from_file: server.loadedFromFile,
    })
  } else if (settings.quiet) {
    stdout.write(`${server.url}\n`)
  } else {
    stdout.write(banner(server, options, paint))
  }
  return { server }
}

type Paint = (format: Parameters<typeof styleText>[0], text: string) => string

function createProgress(
  stdout: CliIO['stdout'],
  silent: boolean,
  paint: Paint,
) {
  const started = performance.now()
  let shown = false
  let total = 0
  return {
    update(done: number, all: number) {
      total = all
      if (silent || !stdout.isTTY || all < 10_000) return
      const width = 30
      const filled = Math.round((done / all) * width)
      stdout.write(
        `\rSeeding customers ${paint('cyan', '█'.repeat(filled))}${'░'.repeat(width - filled)} ${String(Math.round((done / all) * 100)).padStart(3)}% ${done.toLocaleString('en')}/${all.toLocaleString('en')}`,
      )
      shown = true
    },
    done() {
      if (silent || total < 10_000) return
      const seconds = ((performance.now() - started) / 1000).toFixed(1)
      stdout.write(
        `${shown ? '\n' : ''}Seeded ${total.toLocaleString('en')} customers in ${seconds} s\n`,
      )
    },
  }
}

function formatLog(log: RequestLog, paint: Paint): string {
  // Status 0: a scenario dropped the connection unanswered.
  const status = log.status === 0 ? 'network_error' : String(log.status)
  const colour =
    log.status >= 500 || log.status === 0
      ? 'red'
      : log.status >= 400
        ? 'yellow'
        : 'green'
  const time = new Date().toISOString().slice(11, 23)
  return `${paint('gray', time)} ${log.method.padEnd(6)} ${log.path} ${paint(colour, status)} ${log.duration_ms.toFixed(1)}ms${
    log.account_id ? ` ${log.account_id}` : ''
  }${log.credential ? ` ${paint('gray', log.credential)}` : ''}\n`
}

/** What each persona key does, in a banner line. */
const PERSONA_SUMMARY: Record<Persona, string> = {
  'rate-limited': 'one call a minute, then 429',
  slow: 'every answer takes 2 s',
  unavailable: 'every call is a 503',
  'expired-tokens': 'mints already expired tokens',
  'read-only': 'no customers:write',
}

function banner(
  server: SandboxServer,
  options: SandboxServerOptions,
  paint: Paint,
): string {
  const { url, sandbox } = server
  const state = sandbox.state()
  const keys = DEFAULT_ACCOUNTS.flatMap((account) =>
    account.apiKeys.map((key) =>
      key.revoked
        ? `${key.key}  revoked: always 401 invalid_credentials`
        : key.persona
          ? `${key.key}  persona: ${PERSONA_SUMMARY[key.persona]}`
          : `${key.key}  ${account.name} (${account.id})`,
    ),
  )
  const usesDefaultAccounts = options.fixtures === undefined
  const customer = `curl -sS -X POST ${url}/v1/customers -H 'Authorization: Bearer ${DEMO_KEY_ONE}' -H 'Content-Type: application/json' -d '{"name":"Ada Lovelace","email":"ada@example.com"}'`
  const token = `curl -sS -X POST ${url}/v2/tokens -H 'Authorization: Bearer ${DEMO_KEY_ONE}' -H 'Content-Type: application/json' -d '{"scopes":["customers:read"],"expires_in":3600}'`
  const rows: [string, string][] = [
    ['URL', paint('bold', url)],
    [
      'Playground',
      server.playgroundUrl === null
        ? 'not built (npm run build:playground)'
        : `${paint('bold', server.playgroundUrl)} (shows and drives this server; ?mode=page runs it in the browser alone)`,
    ],
    ['Demo key', paint('bold', DEMO_KEY_ONE)],
    [
      'Data',
      `seed ${state.seed}, ${state.accounts.length} accounts, ${state.customers.length} customers${
        server.loadedFromFile
          ? ` (loaded from ${options.dataFile})`
          : options.dataFile
            ? ` (saved to ${options.dataFile})`
            : ''
      }`,
    ],
  ]
  const out = [
    `\n${paint('bold', NAME)} ${packageJson.version}: the Customer and Token Service sandbox\n`,
  ]
  for (const [label, value] of rows) out.push(`  ${label.padEnd(10)} ${value}`)
  if (usesDefaultAccounts) {
    out.push(`  ${'Keys'.padEnd(10)} ${keys[0]}`)
    for (const key of keys.slice(1)) out.push(`  ${''.padEnd(10)} ${key}`)
  }
  out.push(
    '',
    '  Create a customer:',
    `    ${customer}`,
    '  Create a token:',
    `    ${token}`,
    '',
    `  Sandbox   ${url}/__sandbox/state · /__sandbox/requests · /__sandbox/assumptions · /__sandbox/clock`,
    `  Stop      Ctrl+C${options.dataFile ? ' (the data file is saved first)' : ''}`,
    '',
  )
  return `${out.join('\n')}\n`
}

/** One line for what node:util's parseArgs refused, naming the flag to use. */
function describeParseError(error: Error & { code?: string }): string {
  const flag = /'(-{1,2}[^' ]+)/.exec(error.message)?.[1]
  if (
    flag !== undefined &&
    error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'
  ) {
    // @note parseArgs calls `--seed --port 0` ambiguous: the value is missing.
    return `${flag} needs a value: ${flag} <value>`
  }
  if (flag !== undefined && error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const name = flag.replace(/^-+/, '').split('=')[0]!
    const near = closestFlag(name)
    return `Unknown option '${flag}'${near ? `; did you mean --${near}?` : ''}`
  }
  return error.message
    .split('\n')[0]!
    .replace(/\. To specify a positional.*$/, '')
}

/** The known flag nearest to `name` by edit distance, if it is close. */
function closestFlag(name: string): string | undefined {
  let best: string | undefined
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1
  for (const flag of Object.keys(FLAGS)) {
    const distance = editDistance(name, flag)
    if (distance < bestDistance) {
      best = flag
      bestDistance = distance
    }
  }
  return best
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      )
    }
    previous = current
  }
  return previous[b.length]!
}
