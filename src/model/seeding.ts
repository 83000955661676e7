// The data a sandbox starts with: seeded from a seed, or from saved data or a session.
import {
  createFaker,
  seedAccountName,
  seedCustomers,
} from '../../fixtures/seed.ts'
import type { FixtureAccount } from '../../fixtures/demo-keys.ts'
import type { Database } from './db.ts'
import { createIdGenerator } from './ids.ts'
import {
  codePoints,
  JournalEntrySchema,
  SANDBOX_DATA_FORMAT,
  SANDBOX_DATA_VERSION,
  SandboxDataSchema,
  SandboxSessionSchema,
  type SandboxData,
  type SandboxSession,
} from './schemas.ts'
import { isMaskedSecret } from './secrets.ts'
import {
  JS_NAMING,
  type Explain,
  type OptionNaming,
} from '../option-messages.ts'

/** How many records are created at once, seeded or put back. */
export const INSERT_SLICE = 256

/**
 * The settled options that seeding and a session's checks read: the part of
 * `ResolvedOptions` they need, named here so that the model does not reach
 * up to the options module.
 */
export interface SeedingOptions {
  fixtures: { accounts: readonly FixtureAccount[] }
  customersPerAccount: number
  onSeedProgress:
    ((done: number, total: number) => void | Promise<void>) | undefined
  nameLength: { min: number; max: number }
  emailMaxLength: number
  journalLimit: number
  limits: RecordLimits
}

/** The limits that bound the records of saved data (`limits` of the options). */
export interface RecordLimits {
  accounts: number
  customersPerAccount: number
  tokensPerAccount: number
  records: number
}

// How many customers a large seed inserts between two progress reports.
const CUSTOMERS_PER_PROGRESS_REPORT = 5000

// @note Minted accounts take their names from a stream apart from the
// seeded customers', so minting one never shifts the seeded data.
const ACCOUNT_NAMES_SALT = 0x5bd1e995

/**
 * Fills an empty database with the default data of `seed`: the fixtures'
 * accounts and API keys, and each account's faker-generated customers, all
 * created at `now`. Reports progress through `options.onSeedProgress`.
 *
 * @example
 * await seedDefaultData(createDatabase({ indexEmails: false }), {
 *   seed: 1,
 *   options: resolveOptions(),
 *   now: new Date(),
 * })
 */
export async function seedDefaultData(
  db: Database,
  { seed, options, now }: { seed: number; options: SeedingOptions; now: Date },
): Promise<void> {
  // @note Seeded data draws its ids from streams of its own, so the same seed
  // gives the same data in random mode too, and never collides with the ids
  // that requests draw later.
  const nextId = createIdGenerator({ seed, deterministic: true, salt: 'seed:' })
  const faker = createFaker(seed)
  const createdAt = now.toISOString()
  const { accounts } = options.fixtures
  const total = accounts.reduce(
    (sum, account) => sum + (account.customers ?? options.customersPerAccount),
    0,
  )
  let done = 0
  for (const account of accounts) {
    const pending: Promise<unknown>[] = [
      db.insertAccount({
        id: account.id,
        name: account.name,
        created_at: createdAt,
      }),
    ]
    for (const key of account.apiKeys) {
      pending.push(
        db.insertApiKey({
          id: nextId('apiKeyId'),
          account_id: account.id,
          secret: key.key,
          revoked: key.revoked ?? false,
          created_at: createdAt,
          ...(key.persona && { persona: key.persona }),
        }),
      )
    }
    for (const customer of seedCustomers(
      faker,
      account.customers ?? options.customersPerAccount,
      options,
    )) {
      pending.push(
        db.insertCustomer({
          id: nextId('customer'),
          account_id: account.id,
          name: customer.name,
          email: customer.email,
          created_at: createdAt,
        }),
      )
      // @note In slices, as saved data is put back (`INSERT_SLICE`).
      if (pending.length >= INSERT_SLICE) await Promise.all(pending.splice(0))
      if (++done % CUSTOMERS_PER_PROGRESS_REPORT === 0) {
        const paused = options.onSeedProgress?.(done, total)
        if (paused) await paused
      }
    }
    await Promise.all(pending)
  }
  if (total > 0) options.onSeedProgress?.(total, total)
}

/**
 * Fills an empty database with the records of saved data (from `dump()`, a
 * data file, a snapshot or a session), as they were.
 *
 * @example
 * await insertSavedData(createDatabase({ indexEmails: false }), sandbox.dump())
 */
export async function insertSavedData(
  db: Database,
  data: SandboxData,
): Promise<void> {
  const inserts = [
    ...data.accounts.map((r) => () => db.insertAccount(r)),
    ...data.api_keys.map((r) => () => db.insertApiKey(r)),
    ...data.customers.map((r) => () => db.insertCustomer(r)),
    ...data.tokens.map((r) => () => db.insertToken(r)),
  ]
  // @note In slices: a whole data set's creates in flight at once (100k
  // promises and their records' drafts) made the collector's work most of
  // a load's time.
  for (let at = 0; at < inserts.length; at += INSERT_SLICE) {
    const slice = inserts.slice(at, at + INSERT_SLICE)
    await Promise.all(slice.map((insert) => insert()))
  }
}

/**
 * The names of the accounts `createApiKey()` mints without one: the same
 * sequence for the same seed, started again when the data is replaced.
 *
 * @example
 * const nextAccountName = createAccountNamer(1)
 * nextAccountName() // e.g. 'Bailey - Fay-Lowe'
 */
export function createAccountNamer(seed: number): () => string {
  const faker = createFaker(seed ^ ACCOUNT_NAMES_SALT)
  return () => seedAccountName(faker)
}

/**
 * Reads a session (from `sandbox.export()` or `GET /__sandbox/export`) that
 * `createSandbox({ from })` replays; throws a `TypeError` naming the first
 * problem, or saying that its secrets are masked.
 *
 * @example
 * const session = parseSession(JSON.parse(await readFile('session.json', 'utf8')))
 */
export function parseSession(input: unknown): SandboxSession {
  const result = SandboxSessionSchema.safeParse(input)
  if (result.success) {
    const { data } = result.data
    const masked = [...data.api_keys, ...data.tokens].find((record) =>
      isMaskedSecret(record.secret),
    )
    if (masked) {
      // @note Replaying it would create keys that are their masks.
      throw new TypeError(
        `Failed to create a sandbox from a session: its secrets are masked (${masked.secret}), so its keys and tokens cannot be replayed. Export it with GET /__sandbox/export?secrets=include (from this machine or with the admin token) or sandbox.export().`,
      )
    }
    return result.data
  }
  const issue = result.error.issues[0]!
  refuseEdited(issue.path.join('.') || 'the document', issue.message)
}

const JOURNAL_ENTRY = JournalEntrySchema.strict()

/** What a message on a session that was edited ends with. */
const EXPORTED_HINT =
  ' Pass what sandbox.export() or GET /__sandbox/export returned.'

/** Refuses a session that was edited or made by hand, naming the JSON path at fault. */
function refuseEdited(path: string, message: string): never {
  throw new TypeError(
    `Failed to create a sandbox from a session: ${path}: ${message}.${EXPORTED_HINT}`,
  )
}

/**
 * Refuses a session that breaks a rule the API enforces under `options` (the
 * session's own, with those passed beside it): a customer's name or email
 * longer than `nameLength.max` or `emailMaxLength`, a record that
 * `checkRecordRules` refuses (of an account the session does not hold, or
 * past a limit), a journal longer than `journalLimit` or with an
 * entry that is not one the journal writes. Throws a
 * `TypeError` naming the JSON path of the first, as `parseSession` does:
 * such a file was edited or made by hand, and replaying it would serve what
 * no request could have made.
 *
 * @example
 * checkSessionRules(parseSession(input), resolveOptions(session.options))
 */
export function checkSessionRules(
  session: SandboxSession,
  options: Pick<
    SeedingOptions,
    'nameLength' | 'emailMaxLength' | 'journalLimit' | 'limits'
  >,
): void {
  const { data, journal } = session
  if (journal.length > options.journalLimit) {
    refuseEdited(
      'journal',
      `it holds ${journal.length} entries, more than the ${options.journalLimit} that journalLimit keeps; keep the newest ${options.journalLimit}, or replay it with a journalLimit of at least ${journal.length}`,
    )
  }
  // Served as they are by GET /__sandbox/requests, whose document they
  // must fit, and read by tests through sandbox.journal.
  journal.forEach((entry, index) => {
    const parsed = JOURNAL_ENTRY.safeParse(entry)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!
      refuseEdited(['journal', index, ...issue.path].join('.'), issue.message)
    }
  })
  checkRecordRules(data, options.limits, 'data.', (path, explain, limit) => {
    // @note A limit passed is no edit: the remedy is said, and the CLI
    // names the flag that raises it.
    const line = (naming: OptionNaming): string =>
      `Failed to create a sandbox from a session: ${path}: ${explain(naming)}.${limit ? '' : EXPORTED_HINT}`
    throw Object.assign(new TypeError(line(JS_NAMING)), { explain: line })
  })
  const { max } = options.nameLength
  data.customers.forEach((customer, index) => {
    // Counted as the API counts them: names in code points, emails in
    // UTF-16 units.
    if (customer.name !== undefined && codePoints(customer.name) > max) {
      refuseEdited(
        `data.customers.${index}.name`,
        `it is ${codePoints(customer.name)} characters long, more than nameLength.max (${max}) lets a request store`,
      )
    }
    if (
      customer.email !== undefined &&
      customer.email.length > options.emailMaxLength
    ) {
      refuseEdited(
        `data.customers.${index}.email`,
        `it is ${customer.email.length} characters long, more than emailMaxLength (${options.emailMaxLength}) lets a request store`,
      )
    }
  })
}

/**
 * Reads saved data (from `dump()` or a data file) that `load()` puts in;
 * throws a `TypeError` naming the first problem, or the version it cannot
 * read. With `limits` (data a user hands in), also the first record that
 * `checkRecordRules` refuses; without (data the sandbox's own store wrote),
 * the records are taken as they are.
 *
 * @example
 * const data = parseSandboxData(JSON.parse(text), sandbox.options.limits)
 */
export function parseSandboxData(
  input: unknown,
  limits?: RecordLimits,
): SandboxData {
  const result = SandboxDataSchema.safeParse(input)
  if (result.success) {
    if (limits) {
      checkRecordRules(result.data, limits, '', (path, explain) => {
        throw new TypeError(
          `Failed to load sandbox data: ${path}: ${explain(JS_NAMING)}.`,
        )
      })
    }
    return result.data
  }
  const format = (input as { format?: unknown } | null)?.format
  const version = (input as { version?: unknown } | null)?.version
  if (format === SANDBOX_DATA_FORMAT && version !== SANDBOX_DATA_VERSION) {
    throw new TypeError(
      `Failed to load sandbox data: it is version ${String(version)} of the format and this release reads version ${SANDBOX_DATA_VERSION}.`,
    )
  }
  const issue = result.error.issues[0]!
  throw new TypeError(
    `Failed to load sandbox data: ${issue.path.join('.') || 'the document'}: ${issue.message}.`,
  )
}

/**
 * Refuses saved data that no call of the API could have made under
 * `limits`: an API key, customer or token of an account the data does not
 * hold, more accounts than `limits.accounts`, more customers or tokens in an
 * account than `limits.customersPerAccount` or `limits.tokensPerAccount`,
 * more records in all than `limits.records`. Calls `refuse` with the JSON path (after
 * `prefix`) of the first such record, in the order of the data, why (naming
 * the limit as its reader names options), and whether a limit was passed.
 * Held to the data a user hands in (`load()`, `from`); what the sandbox's
 * own store wrote is loaded whatever it holds (a sandbox never refuses to
 * start on its own file), and the CLI says at start which limits it passes.
 *
 * @example
 * checkRecordRules(data, options.limits, '', (path, explain) => {
 *   throw new TypeError(`${path}: ${explain(JS_NAMING)}.`)
 * })
 */
function checkRecordRules(
  data: Pick<SandboxData, 'accounts' | 'api_keys' | 'customers' | 'tokens'>,
  limits: RecordLimits,
  prefix: string,
  refuse: (path: string, explain: Explain, limit: boolean) => never,
): void {
  // @note Kept small: it is in every page that loads the sandbox.
  const quoted = (id: string): string => JSON.stringify(id.slice(0, 100))
  const over = (
    path: string,
    who: string,
    what: string,
    option: keyof RecordLimits,
  ): never =>
    refuse(
      path,
      (naming) =>
        `${who} holds more ${what} than ${naming.set(`limits.${option}`, limits[option])} allows`,
      true,
    )
  const accounts = new Set(data.accounts.map((account) => account.id))
  // One pass (saved data may hold 100k records or more), the accounts first.
  let seen = accounts.size
  if (seen > limits.accounts)
    over(`${prefix}accounts`, 'the data', 'accounts', 'accounts')
  if (seen > limits.records)
    over(`${prefix}accounts`, 'the data', 'records', 'records')
  for (const kind of ['api_keys', 'customers', 'tokens'] as const) {
    const held = new Map<string, number>()
    data[kind].forEach(({ account_id: id }, index) => {
      const path = `${prefix}${kind}.${index}`
      if (!accounts.has(id))
        refuse(
          `${path}.account_id`,
          () =>
            `${quoted(id)} is not the id of an account in ${prefix}accounts; every record belongs to one`,
          false,
        )
      if (++seen > limits.records) over(path, 'the data', 'records', 'records')
      if (kind === 'api_keys') return
      const option = `${kind}PerAccount` as const
      const n = (held.get(id) ?? 0) + 1
      held.set(id, n)
      if (n > limits[option]) over(path, quoted(id), kind, option)
    })
  }
}
