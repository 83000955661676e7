// The flag table: every CLI flag, its option, its parser, its help and its env variable.
import { readFile, stat } from 'node:fs/promises'
import type { ParseArgsConfig } from 'node:util'
import { DEFAULTS, MAX_BODY_BYTES, SERVER_DEFAULTS } from '../defaults.ts'
import type { SandboxServerOptions } from '../runtimes/node.ts'
import {
  JS_NAMING,
  type Explain,
  type OptionNaming,
} from '../option-messages.ts'
import { resolveOptions, type SandboxOptions } from '../options.ts'
import { readSessionFile, SessionFileError } from '../model/session-file.ts'
import { URL_STORES } from '../model/stores.ts'

/** The program's name, as `--help` and every message print it. */
export const NAME = 'customer-token-sandbox'

/** A mistake in the command line or config: one line, the usage, exit 2. */
export class UsageError extends Error {}

/** Settings of the command line itself, beside the server's options. */
type CliSettingName =
  'logFormat' | 'quiet' | 'debug' | 'config' | 'help' | 'version'

/** The name of a row: an option of `createSandboxServer` (and so of `createSandbox`) or a CLI setting. */
export type FlagName = keyof SandboxServerOptions | CliSettingName

type Section = 'server' | 'data' | 'behaviour' | 'limits'

/** One option as the command line, the environment and a config file set it. */
interface FlagRow {
  /**
   * Where the value goes: a sandbox option, an option of the standalone
   * server (which `verify` and `record` leave out of their sandbox), or a
   * setting of the command line.
   */
  target: 'sandbox' | 'server' | 'cli'
  /** The flag without its dashes; none when only a config file sets the option. */
  flag?: string
  /** A one-letter alias, `-h`. */
  short?: string
  /** What the flag takes, as `--help` shows it; none for a switch. */
  value?: string
  /** Reads the flag's (or its environment variable's) text; none for a switch. */
  parse?: (text: string, flag: string) => unknown
  /** The flag's `key=N` pairs join the config file's instead of replacing them. */
  merge?: true
  /** `--help` shows the switch as `--no-<flag>`: it turns a default on off. */
  negated?: true
  /** The line of `--help`, without its default and variable, which are added. */
  help?: string
  section: Section
  /** The default `--help` shows: read from `DEFAULTS` or `SERVER_DEFAULTS`. */
  default?: unknown
  /** The environment variable that sets it, below the flag and above the config file. */
  env?: string
  /** Whether a `--config` file may set it, under the row's name. */
  config: boolean
  /** Other names a config file may give it. */
  configAliases?: readonly string[]
  /** Reads a config file's value, e.g. a string form such as `"100/60s"`. */
  fromConfig?: (value: unknown, name: string) => unknown
}

const int = (text: string, flag: string): number => {
  if (!/^\d{1,15}$/.test(text.trim()))
    throw new UsageError(`--${flag} must be a whole number (got "${text}")`)
  return Number(text)
}

const text = (value: string): string => value

const list = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)

const oneOf =
  <T extends string>(choices: readonly T[]) =>
  (value: string, flag: string): T => {
    if (!choices.includes(value as T)) {
      throw new UsageError(
        `--${flag} must be one of ${choices.join(', ')} (got "${value}")`,
      )
    }
    return value as T
  }

/**
 * Reads `MIN[-MAX]ms`, e.g. `50-200ms` or `100`.
 *
 * @example
 * parseLatency('50-200ms') // { min: 50, max: 200 }
 */
function parseLatency(value: string): { min: number; max: number } {
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
function parseRateLimit(value: string): {
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

/** `MIN-MAX`, `key=N` pairs, or (with `single`) one number for that key. */
const bounds =
  (keys: readonly string[], single?: string) =>
  (value: string, flag: string): Record<string, number> => {
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
          `--${flag} must look like ${keys.map((k) => `${k}=N`).join(',')} or MIN-MAX (got "${value}")`,
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
 * pairs(['records'])('records=300000', 'limits') // { records: 300000 }
 */
const pairs =
  (keys: readonly string[]) =>
  (value: string, flag: string): Record<string, number> => {
    const out: Record<string, number> = {}
    for (const part of list(value)) {
      const [key, raw] = part.split('=').map((s) => s.trim())
      if (key === undefined || !keys.includes(key) || raw === undefined) {
        throw new UsageError(
          `--${flag} takes key=N pairs joined with commas, the keys being ${keys.join(', ')} (got "${value}")`,
        )
      }
      out[key] = int(raw, `${flag} ${key}`)
    }
    return out
  }

/**
 * Reads a JSON file named by a flag or a config file; a missing file or bad
 * JSON is a `UsageError` naming it.
 *
 * @example
 * const session = await readJsonFile('--from', 'session.json')
 */
async function readJsonFile(flag: string, path: string): Promise<unknown> {
  let content: string
  try {
    // @note Opening a FIFO would wait for a writer forever, past Ctrl-C
    // too (the exit waits for the blocked open), and /dev/zero has no end.
    if (!(await stat(path)).isFile()) {
      throw new UsageError(
        `cannot read ${flag} ${path}: it is not a regular file. Give ${flag} the path of a JSON file.`,
      )
    }
    content = await readFile(path, 'utf8')
  } catch (error) {
    if (error instanceof UsageError) throw error
    throw new UsageError(
      `cannot read ${flag} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    )
  }
  try {
    return JSON.parse(content)
  } catch (error) {
    throw new UsageError(
      `${flag} ${path} is not valid JSON: ${(error as Error).message}`,
    )
  }
}

/**
 * Reads a session file, a recording that `record` appended or one JSON
 * session; an unreadable one, or one whose options no sandbox takes, is a
 * `UsageError` naming it.
 *
 * @example
 * const session = await readSession('--from', 'session.jsonl')
 */
async function readSession(flag: string, path: string): Promise<unknown> {
  let session: unknown
  try {
    session = await readSessionFile(path, flag)
  } catch (error) {
    if (error instanceof SessionFileError) throw new UsageError(error.message)
    throw error
  }
  checkSessionOptions(session, `${flag} ${path}`)
  return session
}

/**
 * Refuses a session whose `options` no sandbox takes, in the session's own
 * words: merged with the command line's, createSandbox's message would name
 * a flag or a config file that the user never gave. An export never holds
 * the admin token, which would lock `/__sandbox/*` unasked.
 *
 * @example
 * checkSessionOptions(session, '--from session.json') // throws a UsageError
 */
function checkSessionOptions(session: unknown, named: string): void {
  const { options, secrets } =
    (session as { options?: unknown; secrets?: unknown } | null) ?? {}
  // A masked export is refused as such, with how to export its secrets.
  if (options === null || typeof options !== 'object' || secrets === 'masked')
    return
  const refuse = (message: string): never => {
    throw new UsageError(
      `${named}: the session's options: ${message} Pass what GET /__sandbox/export or sandbox.export() returned.`,
    )
  }
  if ('adminToken' in options)
    refuse(
      'an export never holds "adminToken"; give the admin token beside the session (--admin-token).',
    )
  try {
    resolveOptions(options as SandboxOptions)
  } catch (error) {
    if (!(error instanceof TypeError || error instanceof RangeError))
      throw error
    refuse(
      optionErrorText(error, JS_NAMING).replace(/ See SandboxOptions .*$/, ''),
    )
  }
}

/**
 * What an option error of createSandbox (or of the server) says, its
 * options named through `naming`, without the "Failed to …: " it opens with.
 *
 * @example
 * optionErrorText(error, FLAG_NAMING) // '--max-body-bytes must be a whole number …'
 */
export function optionErrorText(error: Error, naming: OptionNaming): string {
  const { explain } = error as { explain?: Explain }
  return (
    typeof explain === 'function' ? explain.call(error, naming) : error.message
  ).replace(/^Failed to (?:create a sandbox|start the sandbox server): /, '')
}

/** A config file may give a latency or a rate limit in the flag's form. */
const orParsed =
  (parse: (value: string) => unknown) =>
  (value: unknown): unknown =>
    typeof value === 'string' ? parse(value) : value

/**
 * Every option of the CLI, keyed by its name in `SandboxServerOptions` (or,
 * for the command line's own settings, the setting's): its flag, value and
 * parser, help line, default, environment variable and whether a config file
 * may set it. The `parseArgs` options, `--help`, the config file's keys and
 * `SERVER_KEYS` are all read from it: a new option is one row here.
 *
 * @example
 * FLAG_TABLE.rateLimit.flag // 'rate-limit'
 * FLAG_TABLE.rateLimit.parse('100/60s', 'rate-limit') // { limit: 100, windowSeconds: 60 }
 */
export const FLAG_TABLE = {
  port: {
    target: 'server',
    section: 'server',
    flag: 'port',
    value: 'N',
    parse: int,
    help: 'port, 0 for a free one',
    default: SERVER_DEFAULTS.port,
    env: 'PORT',
    config: true,
  },
  host: {
    target: 'server',
    section: 'server',
    flag: 'host',
    value: 'HOST',
    parse: text,
    help: 'interface to listen on; beyond loopback it needs --admin-token',
    default: SERVER_DEFAULTS.host,
    env: 'HOST',
    config: true,
  },
  // @note The server's guard: verify and record build sandboxes without it.
  adminToken: {
    target: 'server',
    section: 'server',
    flag: 'admin-token',
    value: 'TOKEN',
    parse: text,
    help: 'guards /__sandbox/*, at least 16 letters, digits or -._~+/',
    env: 'SANDBOX_ADMIN_TOKEN',
    config: true,
  },
  adminOrigins: {
    target: 'server',
    section: 'server',
    flag: 'admin-origins',
    value: 'LIST',
    parse: list,
    help: 'origins besides loopback ones that may call /__sandbox/* from a browser',
    config: true,
  },
  allowedHosts: {
    target: 'server',
    section: 'server',
    flag: 'allowed-hosts',
    value: 'LIST',
    parse: list,
    help: 'Host names besides loopback ones that /__sandbox/* answers on loopback',
    config: true,
  },
  headersTimeout: {
    target: 'server',
    section: 'server',
    flag: 'headers-timeout',
    value: 'MS',
    parse: int,
    help: "time to send a request's headers, then 408",
    default: SERVER_DEFAULTS.headersTimeout,
    config: true,
  },
  requestTimeout: {
    target: 'server',
    section: 'server',
    flag: 'request-timeout',
    value: 'MS',
    parse: int,
    help: 'time to send a whole request, then 408',
    default: SERVER_DEFAULTS.requestTimeout,
    config: true,
  },
  keepAliveTimeout: {
    target: 'server',
    section: 'server',
    flag: 'keep-alive-timeout',
    value: 'MS',
    parse: int,
    help: 'idle keep-alive connections close after this',
    default: SERVER_DEFAULTS.keepAliveTimeout,
    config: true,
  },
  sendTimeout: {
    target: 'server',
    section: 'server',
    flag: 'send-timeout',
    value: 'MS',
    parse: int,
    help: 'a client that stops reading its answer is cut after this',
    default: SERVER_DEFAULTS.sendTimeout,
    config: true,
  },
  maxHeadersCount: {
    target: 'server',
    section: 'server',
    flag: 'max-headers-count',
    value: 'N',
    parse: int,
    help: 'most header fields per request, then 431',
    default: SERVER_DEFAULTS.maxHeadersCount,
    config: true,
  },
  maxConnections: {
    target: 'server',
    section: 'server',
    flag: 'max-connections',
    value: 'N',
    parse: int,
    help: 'most open connections; more are closed at once',
    default: SERVER_DEFAULTS.maxConnections,
    config: true,
  },
  dataFile: {
    target: 'server',
    section: 'server',
    flag: 'data-file',
    value: 'PATH',
    parse: text,
    help: 'keep the data in a file: each write is on disk before its 201; one server per file',
    env: 'SANDBOX_DATA_FILE',
    config: true,
  },
  store: {
    target: 'server',
    section: 'server',
    flag: 'store',
    value: 'URL',
    parse: text,
    help: `keep the data in ${URL_STORES.map((entry) => entry.describes).join(' or ')}, shared by every replica started with the same URL; not beside --data-file`,
    env: 'SANDBOX_STORE',
    config: true,
  },
  // Deprecated and ignored: every write is stored before it is answered.
  dataFileDelayMs: { target: 'server', section: 'server', config: true },
  from: {
    target: 'sandbox',
    section: 'server',
    flag: 'from',
    value: 'FILE',
    parse: (path: string) => readSession('--from', path),
    help: 'start from a session that GET /__sandbox/export wrote (the same ids and secrets again only if that server ran --deterministic) or that record saved; with --data-file, only while the file does not exist or is empty',
    config: false,
  },
  config: {
    target: 'cli',
    section: 'server',
    flag: 'config',
    value: 'FILE',
    parse: text,
    help: 'read options from a JSON file (same names as the JavaScript options)',
    config: false,
  },
  logFormat: {
    target: 'cli',
    section: 'server',
    flag: 'log-format',
    value: 'pretty|json',
    parse: oneOf(['pretty', 'json'] as const),
    help: 'request log format',
    // The CLI's own setting: its default lives here.
    default: 'pretty',
    env: 'SANDBOX_LOG_FORMAT',
    config: true,
    fromConfig: (value, name) =>
      oneOf(['pretty', 'json'] as const)(String(value), name),
  },
  quiet: {
    target: 'cli',
    section: 'server',
    flag: 'quiet',
    help: 'print the URL only, no banner and no request log',
    config: true,
  },
  debug: {
    target: 'cli',
    section: 'server',
    flag: 'debug',
    help: 'print the stack of an internal error (or env SANDBOX_DEBUG=1)',
    config: false,
  },
  help: {
    target: 'cli',
    section: 'server',
    flag: 'help',
    short: 'h',
    help: 'show this help',
    config: false,
  },
  version: {
    target: 'cli',
    section: 'server',
    flag: 'version',
    short: 'v',
    help: 'show the version',
    config: false,
  },

  seed: {
    target: 'sandbox',
    section: 'data',
    flag: 'seed',
    value: 'N',
    parse: int,
    help: 'faker seed for the seeded data',
    default: DEFAULTS.seed,
    env: 'SANDBOX_SEED',
    config: true,
  },
  customersPerAccount: {
    target: 'sandbox',
    section: 'data',
    flag: 'customers',
    value: 'N',
    parse: int,
    help: 'seeded customers per fixture account',
    default: DEFAULTS.customersPerAccount,
    config: true,
    configAliases: ['customers'],
  },
  deterministic: {
    target: 'sandbox',
    section: 'data',
    flag: 'deterministic',
    help: 'reproducible ids and secrets from the seed',
    default: SERVER_DEFAULTS.deterministic,
    config: true,
  },
  fixtures: {
    target: 'sandbox',
    section: 'data',
    help: 'the accounts and API keys to start with, in place of the documented ones',
    config: true,
  },

  latency: {
    target: 'sandbox',
    section: 'behaviour',
    flag: 'latency',
    value: 'MIN[-MAX]ms',
    parse: parseLatency,
    help: 'latency added to every API call, e.g. 50-200ms',
    default: DEFAULTS.latency,
    config: true,
    fromConfig: orParsed(parseLatency),
  },
  rateLimit: {
    target: 'sandbox',
    section: 'behaviour',
    flag: 'rate-limit',
    value: 'N/WINDOW',
    parse: parseRateLimit,
    help: 'per-credential limit, e.g. 100/60s, 10/m, 1000/h',
    default: DEFAULTS.rateLimit,
    config: true,
    fromConfig: orParsed(parseRateLimit),
  },
  unknownFields: {
    target: 'sandbox',
    section: 'behaviour',
    flag: 'unknown-fields',
    value: 'reject|ignore',
    parse: oneOf(['reject', 'ignore'] as const),
    help: 'request fields the interface does not define',
    default: DEFAULTS.unknownFields,
    config: true,
  },
  requiredFields: {
    target: 'sandbox',
    section: 'behaviour',
    flag: 'required-fields',
    value: 'LIST',
    parse: (value: string, flag: string) =>
      list(value).map((field) =>
        oneOf(['name', 'email'] as const)(field, flag),
      ),
    help: 'customer fields a request must carry',
    default: DEFAULTS.requiredFields,
    config: true,
  },
  nameLength: {
    target: 'sandbox',
    section: 'behaviour',
    flag: 'name-length',
    value: 'MIN-MAX',
    parse: bounds(Object.keys(DEFAULTS.nameLength)),
    help: 'name length as sent, in characters',
    default: DEFAULTS.nameLength,
    config: true,
  },
  emailMaxLength: {
    target: 'sandbox',
    section: 'behaviour',
    flag: 'email-max-length',
    value: 'N',
    parse: int,
    help: 'longest email',
    default: DEFAULTS.emailMaxLength,
    config: true,
  },
  uniqueEmail: {
    target: 'sandbox',
    section: 'behaviour',
    flag: 'unique-email',
    help: '409 email_taken for a duplicate email within an account',
    default: DEFAULTS.uniqueEmail,
    config: true,
  },
  scopes: {
    target: 'sandbox',
    section: 'behaviour',
    flag: 'scopes',
    value: 'LIST',
    parse: list,
    help: 'the scope catalog',
    default: DEFAULTS.scopes,
    config: true,
  },
  maxScopes: {
    target: 'sandbox',
    section: 'behaviour',
    flag: 'max-scopes',
    value: 'N',
    parse: int,
    help: 'most scopes per token',
    default: DEFAULTS.maxScopes,
    config: true,
  },
  expiresIn: {
    target: 'sandbox',
    section: 'behaviour',
    flag: 'expires-in',
    value: 'SPEC',
    parse: bounds(Object.keys(DEFAULTS.expiresIn), 'default'),
    help: 'token lifetimes in seconds: key=N pairs, a default alone, or MIN-MAX',
    default: DEFAULTS.expiresIn,
    config: true,
  },
  v1AcceptsTokens: {
    target: 'sandbox',
    section: 'behaviour',
    flag: 'v1-accepts-tokens',
    negated: true,
    help: 'POST /v1/customers takes API keys only (by default tokens with customers:write too)',
    config: true,
  },
  tokenIssuers: {
    target: 'sandbox',
    section: 'behaviour',
    flag: 'token-issuers',
    value: 'api-keys|api-keys-and-tokens',
    parse: oneOf(['api-keys', 'api-keys-and-tokens'] as const),
    help: 'who may mint tokens',
    default: DEFAULTS.tokenIssuers,
    config: true,
  },
  maxBodyBytes: {
    target: 'sandbox',
    section: 'behaviour',
    flag: 'max-body-bytes',
    value: 'N',
    parse: int,
    help: `largest request body, in bytes, at most ${MAX_BODY_BYTES}`,
    default: DEFAULTS.maxBodyBytes,
    config: true,
  },
  clockAfterSet: {
    target: 'sandbox',
    section: 'behaviour',
    flag: 'clock-after-set',
    value: 'frozen|running',
    parse: oneOf(['frozen', 'running'] as const),
    help: 'the clock once set or advanced',
    default: DEFAULTS.clockAfterSet,
    config: true,
  },
  journalLimit: {
    target: 'sandbox',
    section: 'behaviour',
    flag: 'journal-limit',
    value: 'N',
    parse: int,
    help: 'requests the journal keeps',
    default: DEFAULTS.journalLimit,
    config: true,
  },

  limits: {
    target: 'sandbox',
    section: 'limits',
    flag: 'limits',
    value: 'LIST',
    parse: pairs(Object.keys(DEFAULTS.limits)),
    merge: true,
    help: 'caps on the stores, as key=N pairs',
    default: DEFAULTS.limits,
    config: true,
  },
  idempotency: {
    target: 'sandbox',
    section: 'limits',
    flag: 'idempotency',
    value: 'LIST',
    parse: pairs(Object.keys(DEFAULTS.idempotency)),
    merge: true,
    help: 'Idempotency-Key window in seconds and live keys kept, as key=N pairs',
    default: DEFAULTS.idempotency,
    config: true,
  },
} as const satisfies { [K in FlagName]?: FlagRow }

/**
 * The rows of `FLAG_TABLE` with their names, in the order `--help` lists them.
 *
 * @example
 * FLAG_ROWS.filter(([, row]) => row.config).map(([name]) => name) // the config file's options
 */
export const FLAG_ROWS: readonly (readonly [FlagName, FlagRow])[] =
  Object.entries(FLAG_TABLE) as [FlagName, FlagRow][]

/** The flag table's row of an option, if the option has one. */
const rowOf = (option: string): FlagRow | undefined =>
  (FLAG_TABLE as Record<string, FlagRow | undefined>)[option]

/**
 * Options as the command line names them: by their flag in `FLAG_TABLE`,
 * or, for an option only a config file sets, by its name there. The CLI
 * prints start-up errors with it.
 *
 * @example
 * FLAG_NAMING.set('port', 0) // '--port 0'
 */
export const FLAG_NAMING: OptionNaming = {
  name(option) {
    // A nested option is a key of its flag's pairs: --expires-in min.
    const [key, ...rest] = option.split('.')
    const row = rowOf(key!)
    return row?.flag === undefined
      ? `"${option}" in the config file`
      : `--${row.flag}${rest.length === 0 ? '' : ` ${rest.join('.')}`}`
  },
  set(option, value) {
    // A nested option is a key=N pair of its flag: --limits records=N.
    const [key, ...rest] = option.split('.')
    const row = rowOf(key!)
    const pair = rest.length === 0 ? `${value}` : `${rest.join('.')}=${value}`
    return row?.flag === undefined
      ? `"${option}": ${value} in the config file`
      : `--${row.flag} ${pair}`
  },
}

/**
 * Options as the command line names them when some came from the config
 * file: those by their key there (`"scopes" in the config file`), the rest
 * by their flag, as `FLAG_NAMING` does.
 *
 * @example
 * namingFrom(new Set(['scopes'])).name('scopes') // '"scopes" in the config file'
 */
export function namingFrom(fromConfig: ReadonlySet<string>): OptionNaming {
  const inConfig = (option: string): boolean =>
    fromConfig.has(option.split('.')[0]!)
  return {
    name: (option) =>
      inConfig(option)
        ? `"${option}" in the config file`
        : FLAG_NAMING.name(option),
    set: (option, value) =>
      inConfig(option)
        ? `"${option}": ${value} in the config file`
        : FLAG_NAMING.set(option, value),
  }
}

/**
 * The `options` of node:util's `parseArgs`, one per row with a flag.
 *
 * @example
 * parseArgs({ args: ['--seed', '7'], options: PARSE_ARGS_OPTIONS }).values // { seed: '7' }
 */
export const PARSE_ARGS_OPTIONS: NonNullable<ParseArgsConfig['options']> =
  Object.fromEntries(
    FLAG_ROWS.flatMap(([, row]) =>
      row.flag === undefined
        ? []
        : [
            [
              row.flag,
              {
                type: row.parse === undefined ? 'boolean' : 'string',
                ...(row.short !== undefined && { short: row.short }),
                // Given twice, key=N flags join their pairs.
                ...(row.merge && { multiple: true }),
              },
            ],
          ],
    ),
  )

/**
 * The names a config file may hold, each with the row it sets: the rows a
 * config file may set, under their names and aliases.
 *
 * @example
 * CONFIG_KEYS.get('customers') // 'customersPerAccount'
 */
const CONFIG_KEYS: ReadonlyMap<string, FlagName> = new Map(
  FLAG_ROWS.flatMap(([name, row]) =>
    row.config
      ? [name, ...(row.configAliases ?? [])].map((key) => [key, name] as const)
      : [],
  ),
)

/**
 * The config file's keys that are not sandbox options: the standalone
 * server's and the command line's. `verify` and `record` leave them out of
 * the sandbox they build from the same file.
 *
 * @example
 * SERVER_KEYS.has('port') // true
 * SERVER_KEYS.has('uniqueEmail') // false
 */
export const SERVER_KEYS: ReadonlySet<string> = new Set(
  [...CONFIG_KEYS].flatMap(([key, name]) =>
    FLAG_TABLE[name as keyof typeof FLAG_TABLE].target === 'sandbox'
      ? []
      : [key],
  ),
)

/**
 * Reads a `--config` file: a JSON object of options with their JavaScript
 * names (the table's rows a config file may set). A latency or rate limit may
 * be given in the flag's form, and `customers` stands for
 * `customersPerAccount`.
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
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(config)) {
    const name = CONFIG_KEYS.get(key)
    if (name === undefined)
      throw new UsageError(`--config ${path}: unknown option "${key}"`)
    const row: FlagRow = FLAG_TABLE[name as keyof typeof FLAG_TABLE]
    if (
      row.flag !== undefined &&
      row.parse === undefined &&
      typeof value !== 'boolean'
    ) {
      throw new UsageError(
        `--config ${path}: "${key}" must be true or false (got ${JSON.stringify(value)})`,
      )
    }
    out[name] = row.fromConfig ? row.fromConfig(value, row.flag ?? name) : value
  }
  return out
}

const isPairs = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A default as the flag would take it: `a,b`, `key=N` pairs, `off`. */
function show(value: unknown): string {
  if (value === false) return 'off'
  if (value === true) return 'on'
  if (Array.isArray(value)) return value.join(',')
  if (isPairs(value)) {
    return Object.entries(value as object)
      .map(([key, entry]) => `${key}=${String(entry)}`)
      .join(',')
  }
  return String(value)
}

/**
 * How `--help` names a row's flag: `--port N`, `-h, --help`,
 * `--no-v1-accepts-tokens`; `undefined` for a row without a flag.
 *
 * @example
 * flagLabel(FLAG_TABLE.rateLimit) // '--rate-limit N/WINDOW'
 */
export function flagLabel(row: FlagRow): string | undefined {
  if (row.flag === undefined) return undefined
  const flag = `--${row.negated ? 'no-' : ''}${row.flag}`
  return `${row.short === undefined ? '' : `-${row.short}, `}${flag}${row.value === undefined ? '' : ` ${row.value}`}`
}

const SECTIONS: Record<Section, string> = {
  server: 'Server',
  data: 'Data',
  behaviour: 'Behaviour (the assumption ledger: GET /__sandbox/assumptions)',
  limits: 'Limits (at a limit: 409 limit_reached naming it)',
}

/** Where the help text starts on a line, and the width it keeps within. */
const COLUMN = 27
const WIDTH = 100

function helpLines(row: FlagRow): string[] {
  const label = `  ${flagLabel(row)!}`
  const notes = [
    ...(row.default === undefined
      ? []
      : [
          `${isPairs(row.default) ? 'defaults' : 'default'} ${show(row.default)}`,
        ]),
    ...(row.env === undefined ? [] : [`env ${row.env}`]),
  ]
  const note = notes.length === 0 ? '' : `(${notes.join(', ')})`
  const indent = ' '.repeat(COLUMN)
  const lines =
    label.length < COLUMN - 1
      ? [`${label.padEnd(COLUMN)}${row.help ?? ''}`]
      : [label, `${indent}${row.help ?? ''}`]
  if (note === '') return lines
  const last = lines.length - 1
  if (lines[last]!.length + 1 + note.length <= WIDTH)
    lines[last] = `${lines[last]} ${note}`
  else lines.push(`${indent}${note}`)
  return lines
}

/**
 * The `--help` text, built from `FLAG_TABLE`: every row with a flag, in its
 * section, with its default and environment variable.
 *
 * @example
 * process.stdout.write(renderUsage())
 */
export function renderUsage(): string {
  const out = [
    `Usage: ${NAME} [options]`,
    `       ${NAME} verify --target URL --key KEY   check the assumptions against a live service`,
    `       ${NAME} record --target URL             record a live service's answers (see --help of each)`,
    '',
    'Serves the Customer and Token Service sandbox over HTTP. Options come from',
    'the flags, then the environment variables named below, then --config.',
  ]
  for (const [section, title] of Object.entries(SECTIONS)) {
    out.push('', title)
    for (const [, row] of FLAG_ROWS) {
      if (row.section === section && row.flag !== undefined)
        out.push(...helpLines(row))
    }
  }
  out.push('', 'Only in a --config file')
  for (const [name, row] of FLAG_ROWS) {
    if (row.config && row.flag === undefined && row.help !== undefined)
      out.push(`  ${name.padEnd(COLUMN - 3)} ${row.help}`)
  }
  return `${out.join('\n')}\n`
}
