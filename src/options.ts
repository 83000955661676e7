// SandboxOptions, their schema and resolveOptions(): every setting of a sandbox, settled.
import { z } from 'zod'
import type { ClockAfterSet } from './model/clock.ts'
import { problemJson, type ErrorFormatter } from './model/problems.ts'
import { isIdOf } from './model/ids.ts'
import { PERSONAS } from './model/personas.ts'
import type { JournalEntry } from './model/journal-entry.ts'
import { SCOPE_PATTERN } from './model/schemas.ts'
import { BEARER_CREDENTIAL } from './model/secrets.ts'
import { DEFAULT_ACCOUNTS, type FixtureAccount } from '../fixtures/demo-keys.ts'
import { DEFAULTS, MAX_BODY_BYTES, MAX_DELAY_MS } from './defaults.ts'
import {
  JS_NAMING,
  optionsRangeError,
  optionsTypeError,
  wholeNumber,
  type OptionNaming,
} from './option-messages.ts'

/** A fixed-window rate limit per credential. */
export interface RateLimitOptions {
  /** Requests allowed per window. */
  limit: number
  /** The window's length in seconds on the sandbox clock. */
  windowSeconds: number
}

/**
 * Caps on the sandbox's stores. A call that would pass one is refused with
 * `409 limit_reached` naming the limit and its option, and stores nothing
 * (the JavaScript API throws a `RangeError`). Seeded records, and those a
 * data file or store already holds, count towards them but are never
 * refused; a seed that alone fills `records` or an account's
 * `customersPerAccount` throws when the sandbox is made, and data handed to
 * `load()` or `from` past `records`, `customersPerAccount` or
 * `tokensPerAccount` is refused with a `TypeError`.
 */
export interface LimitsOptions {
  /** Customers one account may hold. */
  customersPerAccount?: number
  /** Tokens (expired ones included) one account may hold. */
  tokensPerAccount?: number
  /** Records in all: accounts, API keys, customers and tokens. */
  records?: number
  /** Accounts in all, fixture accounts included (`POST /__sandbox/api-keys` adds one each). */
  accounts?: number
  /** Scenarios queued at once, over every operation: in the sandbox-wide queue, and in all accounts' queues together. */
  scenarios?: number
  /**
   * Scenarios one account may queue at once, so that no account takes the
   * share of `scenarios` that the accounts' queues have together.
   */
  scenariosPerAccount?: number
  /** Named snapshots kept at once; each is a whole copy of the data. */
  snapshots?: number
}

/** The defaults of `limits`. */
export const DEFAULT_LIMITS: Required<LimitsOptions> = DEFAULTS.limits

/** A latency range in milliseconds, drawn uniformly per request. */
export interface LatencyOptions {
  min: number
  max: number
}

/**
 * The one options object of `createSandbox()`. Every field is optional; the
 * assumption table (docs/reference/assumptions.md) says which gap of the interface each one fills.
 */
export interface SandboxOptions {
  /**
   * Seeds faker (accounts' customers) and, in deterministic mode, every id and secret.
   * @default 1
   * @example createSandbox({ seed: 42 })
   */
  seed?: number
  /**
   * Where the API lives. Unset, the handlers match the API's paths on any
   * origin; set, only that origin and path prefix.
   * @default undefined
   * @example createSandbox({ baseUrl: 'https://api.acme.test/api' })
   */
  baseUrl?: string
  /**
   * Reproducible ids and token secrets from the seed. The standalone server
   * turns it off and draws them from Web Crypto; started from an export, it
   * keeps the exporting sandbox's, and from a recording, which holds none,
   * its own.
   * @default true
   * @example createSandbox({ deterministic: false })
   */
  deterministic?: boolean
  /**
   * The accounts and API keys the sandbox starts with.
   * @default { accounts: DEFAULT_ACCOUNTS }
   * @example createSandbox({ fixtures: { accounts: [{ id: 'acct_MyTeamAccount1', name: 'My team', apiKeys: [{ key: 'sk_test_…' }] }] } })
   */
  fixtures?: { accounts?: readonly FixtureAccount[] }
  /**
   * Faker-generated customers seeded into each fixture account.
   * @default 25
   * @example createSandbox({ customersPerAccount: 0 })
   */
  customersPerAccount?: number
  /**
   * Request fields the interface does not define (`id` included): rejected with a 422, or ignored.
   * @default 'reject'
   * @example createSandbox({ unknownFields: 'ignore' })
   */
  unknownFields?: 'reject' | 'ignore'
  /**
   * The customer fields a request must carry.
   * @default ['name', 'email']
   * @example createSandbox({ requiredFields: ['email'] })
   */
  requiredFields?: readonly ('name' | 'email')[]
  /**
   * Bounds of `name`, in characters (code points) as sent. A name holds no
   * control character (but tab and line breaks) or unpaired surrogate, and
   * with a `min` above 0 a visible character (not only whitespace,
   * combining marks or characters rendered as nothing: zero-width,
   * bidirectional marks and the like).
   * @default { min: 1, max: 200 }
   * @example createSandbox({ nameLength: { min: 2, max: 100 } })
   */
  nameLength?: { min?: number; max?: number }
  /**
   * The longest `email` accepted, in characters.
   * @default 254
   * @example createSandbox({ emailMaxLength: 120 })
   */
  emailMaxLength?: number
  /**
   * Whether one account may hold two customers with one email (compared case-insensitively): off, or `409 email_taken`.
   * @default false
   * @example createSandbox({ uniqueEmail: true })
   */
  uniqueEmail?: boolean
  /**
   * The scope catalog, each `<resource>:<access>`.
   * @default ['customers:read', 'customers:write', 'tokens:write']
   * @example createSandbox({ scopes: ['customers:read', 'customers:write', 'tokens:write', 'invoices:read'] })
   */
  scopes?: readonly string[]
  /**
   * The most scopes one token may carry.
   * @default 20
   * @example createSandbox({ maxScopes: 5 })
   */
  maxScopes?: number
  /**
   * `expires_in` in seconds: the value used when a request omits it, and the bounds.
   * @default { default: 3600, min: 60, max: 86400 }
   * @example createSandbox({ expiresIn: { max: 600 } })
   */
  expiresIn?: { default?: number; min?: number; max?: number }
  /**
   * Whether `POST /v1/customers` accepts tokens (with `customers:write`) as well as API keys.
   * @default true
   * @example createSandbox({ v1AcceptsTokens: false })
   */
  v1AcceptsTokens?: boolean
  /**
   * Who may mint tokens: API keys only, or also tokens carrying `tokens:write`
   * (for a subset of their own scopes, ending no later than themselves).
   * @default 'api-keys-and-tokens'
   * @example createSandbox({ tokenIssuers: 'api-keys' })
   */
  tokenIssuers?: 'api-keys' | 'api-keys-and-tokens'
  /**
   * A fixed-window rate limit per credential, or `false` for none.
   * @default false
   * @example createSandbox({ rateLimit: { limit: 100, windowSeconds: 60 } })
   */
  rateLimit?: RateLimitOptions | false
  /**
   * Latency added to every API call, in milliseconds, or `false` for none.
   * @default false
   * @example createSandbox({ latency: { min: 50, max: 250 } })
   */
  latency?: LatencyOptions | false
  /**
   * Renders every error. The default is RFC 9457 problem JSON.
   * One that throws or returns no Response is said on stderr, and the error answered as problem JSON.
   * @default problemJson
   * @example createSandbox({ errorFormat: (p) => Response.json({ error: p.code }, { status: p.status }) })
   */
  errorFormat?: ErrorFormatter
  /**
   * The largest request body accepted, in bytes; larger ones get `413`. At
   * most 268435456 (256 MiB): a body is read as one string.
   * @default 1048576
   * @example createSandbox({ maxBodyBytes: 64 * 1024 })
   */
  maxBodyBytes?: number
  /**
   * Once set or advanced, whether the clock stays where it was put or runs on from there.
   * @default 'frozen'
   * @example createSandbox({ clockAfterSet: 'running' })
   */
  clockAfterSet?: ClockAfterSet
  /**
   * How long an `Idempotency-Key` is remembered (sandbox clock) and how many
   * live keys are kept, in all and per account. A new key past either cap is
   * `409 limit_reached`: a key whose window is still open is never dropped,
   * so a retry never becomes a duplicate.
   * @default { ttlSeconds: 86400, maxEntries: 50000, maxEntriesPerAccount: 1000 }
   * @example createSandbox({ idempotency: { ttlSeconds: 3600 } })
   */
  idempotency?: {
    ttlSeconds?: number
    maxEntries?: number
    maxEntriesPerAccount?: number
  }
  /**
   * Caps on the stores: records per account and in all, accounts, queued
   * scenarios and snapshots. At a cap the answer is `409 limit_reached`.
   * @default { customersPerAccount: 10000, tokensPerAccount: 10000, records: 300000, accounts: 10000, scenarios: 1000, scenariosPerAccount: 100, snapshots: 10 }
   * @example createSandbox({ limits: { customersPerAccount: 100_000, records: 2_000_000 } })
   */
  limits?: LimitsOptions
  /**
   * How many requests the journal keeps, newest first.
   * @default 1000
   * @example createSandbox({ journalLimit: 100 })
   */
  journalLimit?: number
  /**
   * When set, `/__sandbox/*` (but its health check) requires `Authorization: Bearer <adminToken>`.
   * At least 16 characters, each one a Bearer credential may hold: letters, digits and `-._~+/` (`=` at the end).
   * @default undefined
   * @example createSandbox({ adminToken: process.env.SANDBOX_ADMIN_TOKEN })
   */
  adminToken?: string
  /**
   * Called after every API request with its journal entry: for logging.
   * One that throws is said on stderr, and the request answered all the same.
   * @default undefined
   * @example createSandbox({ onRequest: (entry) => console.log(entry.method, entry.path, entry.status) })
   */
  onRequest?: (entry: JournalEntry) => void
  /**
   * Called while seeding, every few thousand customers: for a progress bar.
   * A promise it returns is awaited before the seed goes on, so a callback
   * that settles on the next turn of the event loop lets signals and timers
   * through during a long seed.
   * @default undefined
   * @example createSandbox({ customersPerAccount: 50_000, onSeedProgress: (done, total) => bar.update(done / total) })
   */
  onSeedProgress?: (done: number, total: number) => void | Promise<void>
  /**
   * Starts from a session that `sandbox.export()` (or `GET /__sandbox/export`)
   * returned: its options, data, clock, journal and id positions. Options
   * passed beside it win over the session's. A session that breaks a rule
   * of the API under them (a record of no account, an account past
   * `limits.customersPerAccount`, …) throws a `TypeError` naming the first.
   * @default undefined
   * @example createSandbox({ from: JSON.parse(await readFile('session.json', 'utf8')) })
   */
  from?: unknown
}

/** The options with every default settled. */
export interface ResolvedOptions {
  seed: number
  baseUrl: URL | undefined
  deterministic: boolean
  fixtures: { accounts: readonly FixtureAccount[] }
  customersPerAccount: number
  unknownFields: 'reject' | 'ignore'
  requiredFields: readonly ('name' | 'email')[]
  nameLength: { min: number; max: number }
  emailMaxLength: number
  uniqueEmail: boolean
  scopes: readonly string[]
  maxScopes: number
  expiresIn: { default: number; min: number; max: number }
  v1AcceptsTokens: boolean
  tokenIssuers: 'api-keys' | 'api-keys-and-tokens'
  rateLimit: RateLimitOptions | false
  latency: LatencyOptions | false
  errorFormat: ErrorFormatter
  maxBodyBytes: number
  clockAfterSet: ClockAfterSet
  idempotency: {
    ttlSeconds: number
    maxEntries: number
    maxEntriesPerAccount: number
  }
  limits: Required<LimitsOptions>
  journalLimit: number
  adminToken: string | undefined
  onRequest: ((entry: JournalEntry) => void) | undefined
  onSeedProgress:
    ((done: number, total: number) => void | Promise<void>) | undefined
}

/** Scopes every sandbox knows unless `scopes` says otherwise. */
export const DEFAULT_SCOPES: readonly string[] = DEFAULTS.scopes

const positiveInt = (max?: number) => wholeNumber(1, max)

/** The types and bounds of `SandboxOptions`; `resolveOptions` reads it. */
export const OptionsSchema = z
  .object({
    seed: wholeNumber(0, 0xffffffff),
    baseUrl: z.string().refine((value) => URL.canParse(value), {
      message: 'must be an absolute URL such as "https://api.acme.test/api"',
    }),
    deterministic: z.boolean(),
    fixtures: z.object({
      accounts: z.array(
        z.object({
          id: z.string().refine((id) => isIdOf('account', id), {
            message: 'must be "acct_" and 14 base62 characters',
          }),
          name: z.string().min(1),
          apiKeys: z.array(
            z.object({
              key: z.string().refine((key) => isIdOf('apiKey', key), {
                message: 'must be "sk_test_" and 24 base62 characters',
              }),
              revoked: z.boolean().optional(),
              persona: z.enum(PERSONAS).optional(),
            }),
          ),
          customers: wholeNumber(0, 1_000_000).optional(),
        }),
      ),
    }),
    customersPerAccount: wholeNumber(0, 1_000_000),
    unknownFields: z.enum(['reject', 'ignore']),
    requiredFields: z.array(z.enum(['name', 'email'])),
    nameLength: z.object({ min: wholeNumber(0), max: positiveInt() }).partial(),
    emailMaxLength: positiveInt(),
    uniqueEmail: z.boolean(),
    scopes: z
      .array(
        z.string().regex(SCOPE_PATTERN, {
          message: 'must each be "<resource>:<access>", e.g. "customers:read"',
        }),
      )
      .min(1),
    maxScopes: positiveInt(1000),
    expiresIn: z
      .object({
        default: positiveInt(),
        min: positiveInt(),
        max: positiveInt(),
      })
      .partial(),
    v1AcceptsTokens: z.boolean(),
    tokenIssuers: z.enum(['api-keys', 'api-keys-and-tokens']),
    rateLimit: z.union([
      z.literal(false),
      z.object({ limit: positiveInt(), windowSeconds: positiveInt() }),
    ]),
    latency: z.union([
      z.literal(false),
      z.object({
        min: wholeNumber(0),
        max: wholeNumber(0, MAX_DELAY_MS),
      }),
    ]),
    errorFormat: z.custom<ErrorFormatter>(
      (value) => typeof value === 'function',
      {
        message: 'must be a function (problem) => Response',
      },
    ),
    // A body is read as one string (see MAX_BODY_BYTES).
    maxBodyBytes: positiveInt(MAX_BODY_BYTES),
    clockAfterSet: z.enum(['frozen', 'running']),
    idempotency: z
      .object({
        ttlSeconds: positiveInt(),
        maxEntries: positiveInt(),
        maxEntriesPerAccount: positiveInt(),
      })
      .partial()
      .strict(),
    limits: z
      .object({
        customersPerAccount: positiveInt(),
        tokensPerAccount: positiveInt(),
        records: positiveInt(),
        accounts: positiveInt(),
        scenarios: positiveInt(),
        scenariosPerAccount: positiveInt(),
        snapshots: positiveInt(),
      })
      .partial()
      .strict(),
    journalLimit: positiveInt(),
    adminToken: z
      .string()
      .min(16, { message: 'must be at least 16 characters long' })
      // @note Else no Authorization header can carry it: the surface locks.
      .regex(BEARER_CREDENTIAL, {
        message:
          'must be one Bearer credential: letters, digits and - . _ ~ + / (then = at the end), no spaces or quotes',
      }),
    onRequest: z.custom<(entry: JournalEntry) => void>(
      (value) => typeof value === 'function',
      { message: 'must be a function (entry) => void' },
    ),
    onSeedProgress: z.custom<
      (done: number, total: number) => void | Promise<void>
    >((value) => typeof value === 'function', {
      message: 'must be a function (done, total) => void',
    }),
  })
  .partial()
  .strict()

/**
 * Settles the defaults of every option and validates them, throwing a
 * `TypeError` that names the option and how to fix it.
 *
 * @example
 * resolveOptions({ expiresIn: { max: 600 } }).expiresIn // { default: 600, min: 60, max: 600 }
 */
export function resolveOptions(options: SandboxOptions = {}): ResolvedOptions {
  const parsed = OptionsSchema.safeParse(options)
  if (!parsed.success) {
    throw optionsTypeError(parsed.error, 'create a sandbox', 'SandboxOptions')
  }
  const o = parsed.data
  const { min, max } = withDefaults(DEFAULTS.expiresIn, o.expiresIn)
  const resolved: ResolvedOptions = {
    ...withDefaults<Defaults>(DEFAULTS, o),
    baseUrl: o.baseUrl === undefined ? undefined : new URL(o.baseUrl),
    // @note Copies of the defaults, as the parse copies what was passed:
    // a change to one sandbox's `options` never reaches another sandbox.
    fixtures: {
      accounts:
        o.fixtures?.accounts ??
        DEFAULT_ACCOUNTS.map((account) => ({
          ...account,
          apiKeys: account.apiKeys.map((key) => ({ ...key })),
        })),
    },
    requiredFields: o.requiredFields ?? [...DEFAULTS.requiredFields],
    scopes: o.scopes ?? [...DEFAULTS.scopes],
    nameLength: withDefaults(DEFAULTS.nameLength, o.nameLength),
    expiresIn: {
      min,
      max,
      default:
        o.expiresIn?.default ??
        Math.min(Math.max(DEFAULTS.expiresIn.default, min), max),
    },
    errorFormat: o.errorFormat ?? problemJson,
    idempotency: withDefaults(DEFAULTS.idempotency, o.idempotency),
    limits: withDefaults(DEFAULT_LIMITS, o.limits),
    adminToken: o.adminToken,
    onRequest: o.onRequest,
    onSeedProgress: o.onSeedProgress,
  }
  checkConsistency(resolved)
  return resolved
}

/** The options `DEFAULTS` holds a default of. */
type Defaults = Omit<
  ResolvedOptions,
  | 'baseUrl'
  | 'fixtures'
  | 'errorFormat'
  | 'adminToken'
  | 'onRequest'
  | 'onSeedProgress'
>

/**
 * `defaults` with the options given over them, one level deep. @note An
 * option given as `undefined` keeps its default: a spread would set it to
 * `undefined`, and `limits: { records: undefined }` would lift the limit.
 */
function withDefaults<T extends object>(defaults: T, given?: object): T {
  const merged = { ...defaults } as Record<string, unknown>
  for (const [key, value] of Object.entries(given ?? {}))
    if (value !== undefined) merged[key] = value
  return merged as T
}

/** Names an option in a message; `first` when it opens the sentence. */
type Name = (option: string, first?: boolean) => string

function checkConsistency(o: ResolvedOptions): void {
  // @note `what` names options through `name`, so that the CLI's message
  // names the flags its user wrote (`--expires-in min`), not `expiresIn.min`.
  const fail = (what: string | ((name: Name) => string)): never => {
    const say = typeof what === 'string' ? () => what : what
    const message = `Failed to create a sandbox: ${say((option, first) => (first ? `option "${option}"` : `"${option}"`))}.`
    throw Object.assign(new RangeError(message), {
      explain: (naming: OptionNaming) =>
        naming === JS_NAMING
          ? message
          : `Failed to create a sandbox: ${say((option) => naming.name(option))}.`,
    })
  }
  const { expiresIn, nameLength, latency } = o
  if (expiresIn.min > expiresIn.max) {
    fail(
      (name) =>
        `${name('expiresIn.min', true)} (${expiresIn.min}) is above ${name('expiresIn.max')} (${expiresIn.max}); lower min or raise max`,
    )
  }
  if (expiresIn.default < expiresIn.min || expiresIn.default > expiresIn.max) {
    fail(
      (name) =>
        `${name('expiresIn.default', true)} (${expiresIn.default}) is outside ${expiresIn.min}–${expiresIn.max}; set a default within the bounds`,
    )
  }
  if (nameLength.min > nameLength.max) {
    fail(
      (name) =>
        `${name('nameLength.min', true)} (${nameLength.min}) is above ${name('nameLength.max')} (${nameLength.max})`,
    )
  }
  if (latency && latency.min > latency.max) {
    fail(
      (name) =>
        `${name('latency.min', true)} (${latency.min}) is above ${name('latency.max')} (${latency.max}); swap them (min ${latency.max}, max ${latency.min})`,
    )
  }
  if (new Set(o.scopes).size !== o.scopes.length) {
    fail(
      (name) =>
        `${name('scopes', true)} lists a scope twice; list each scope once`,
    )
  }
  checkSeedRoom(o)
  const ids = new Set<string>()
  const keys = new Set<string>()
  for (const account of o.fixtures.accounts) {
    if (ids.has(account.id))
      fail(`fixture account "${account.id}" is listed twice`)
    ids.add(account.id)
    for (const { key } of account.apiKeys) {
      if (keys.has(key))
        fail(
          `fixture API key "${key.slice(0, 8)}…${key.slice(-4)}" is listed twice`,
        )
      keys.add(key)
    }
  }
}

/**
 * Refuses a seed that alone fills `limits.records` or an account's
 * `limits.customersPerAccount`. @note Seeded records are never refused, so
 * such a sandbox would answer every create with `409 limit_reached` before
 * its first request; better to say so when it is made, before a long seed.
 */
function checkSeedRoom(o: ResolvedOptions): void {
  const { limits } = o
  const n = (value: number): string => value.toLocaleString('en')
  let keys = 0
  let customers = 0
  let fullest: { id: string; customers: number } | undefined
  for (const account of o.fixtures.accounts) {
    const seeded = account.customers ?? o.customersPerAccount
    keys += account.apiKeys.length
    customers += seeded
    if (
      seeded >= limits.customersPerAccount &&
      seeded > (fullest?.customers ?? -1)
    )
      fullest = { id: account.id, customers: seeded }
  }
  const accounts = o.fixtures.accounts.length
  const records = accounts + keys + customers
  // Each limit the seed fills, and why.
  const full: [string, string][] = []
  if (records >= limits.records) {
    full.push([
      'limits.records',
      `(${n(limits.records)}): it makes ${n(records)} records (${n(accounts)} fixture accounts, their ${n(keys)} API keys and ${n(customers)} customers)`,
    ])
  }
  if (fullest !== undefined) {
    full.push([
      'limits.customersPerAccount',
      `(${n(limits.customersPerAccount)}): account "${fullest.id}" is seeded with ${n(fullest.customers)} customers`,
    ])
  }
  if (full.length === 0) return
  // @note It names options: the CLI's `explain` names their flags.
  throw optionsRangeError(
    (naming) =>
      `Failed to create a sandbox: the seed alone fills ${full.map((limit) => limit.join(' ')).join('; and ')}, so creates would be refused before the first request. Seed fewer customers (${naming.set('customersPerAccount', 'N')}) or raise the ${full.length > 1 ? 'limits' : 'limit'} (${full.map(([name]) => naming.set(name, 'N')).join(' and ')}).`,
  )
}
