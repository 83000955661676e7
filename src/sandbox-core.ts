import { createOperationSchemas, OPERATIONS } from '../handlers/index.ts'
import { sandboxRoutes } from '../handlers/sandbox.ts'
import {
  createFaker,
  seedAccountName,
  seedCustomers,
} from '../fixtures/seed.ts'
import { accountRoutes } from '../handlers/account.ts'
import {
  createAccountControls,
  type AccountControls,
} from './request/account-controls.ts'
import { assumptionLedger } from './assumptions.ts'
import { createClock } from './model/clock.ts'
import type { SandboxContext, StorageHook } from './request/context.ts'
import { createDatabase, type Database } from './model/db.ts'
import { createIdempotencyStore } from './request/idempotency.ts'
import {
  createIdGenerator,
  createCryptoRandom,
  createSeededRandom,
  type IdKind,
} from './model/ids.ts'
import { createJournal, type JournalEntry } from './request/journal.ts'
import { checkRoom, limitHint, LimitReachedError } from './request/limits.ts'
import {
  resolveOptions,
  type ResolvedOptions,
  type SandboxOptions,
} from './options.ts'
import { createRateLimiter } from './request/rate-limit.ts'
import { PERSONA_RATE_LIMIT } from './model/personas.ts'
import { operationRoute } from './request/pipeline.ts'
import { createRouter, type Router } from './request/router.ts'
import type { AccountView, SandboxCore, TokenView } from './sandbox.ts'
import { createScenarios } from './request/scenarios.ts'
import {
  SANDBOX_DATA_FORMAT,
  SANDBOX_DATA_VERSION,
  SandboxDataSchema,
  SandboxSessionSchema,
  SESSION_FORMAT,
  SESSION_VERSION,
  type SandboxData,
  type SandboxSession,
  type TokenRecord,
} from './model/schemas.ts'
import { isMaskedSecret, maskSecret } from './model/secrets.ts'

/** What a host (the server) gives the core besides options. */
export interface SandboxAdapter {
  /** Durable storage: each write is stored before it is answered. */
  storage?: StorageHook
}

/**
 * The sandbox without MSW: its data, clock, journal, scenarios and route
 * table, answering through one `fetch`. `createSandbox()` binds it to MSW
 * handlers; the standalone server serves the same `fetch` through srvx, so
 * it never loads MSW.
 *
 * @example
 * const { sandbox, router } = createSandboxCore({ seed: 1 })
 * await sandbox.fetch(new Request('http://localhost/__sandbox/health'))
 */
export function createSandboxCore(
  options: SandboxOptions = {},
  adapter: SandboxAdapter = {},
): {
  sandbox: SandboxCore
  router: Router
} {
  const { from, ...explicit } = options
  const session = from === undefined ? undefined : parseSession(from)
  // A session's options are the base; the ones passed beside it win.
  const resolved = resolveOptions(
    session
      ? { ...(session.options as SandboxOptions), ...explicit }
      : explicit,
  )
  let seed = session?.data.seed ?? resolved.seed
  const snapshots = new Map<string, { data: SandboxData; created_at: string }>()
  let pendingAccounts = 0

  const globalClock = createClock(resolved.clockAfterSet)
  const globalJournal = createJournal(resolved.journalLimit)
  const ctx: SandboxContext = {
    options: resolved,
    storage: adapter.storage,
    seeded: false,
    clock: globalClock,
    schemas: createOperationSchemas(resolved),
    scenarios: createScenarios(resolved.latency, resolved.limits.scenarios),
    journal: globalJournal,
    accounts: createAccountControls({
      clock: globalClock,
      journal: globalJournal,
      afterSet: resolved.clockAfterSet,
      maxScenarios: resolved.limits.scenarios,
    }),
    db: createDatabase({ indexEmails: resolved.uniqueEmail }),
    nextId: createIdGenerator({ seed, deterministic: resolved.deterministic }),
    random: createCryptoRandom(),
    idempotency: createIdempotencyStore({
      ttlMs: 0,
      maxEntries: 1,
      maxEntriesPerAccount: 1,
    }),
    rateLimiter: undefined,
    personaLimiter: createRateLimiter(PERSONA_RATE_LIMIT),
    ready: Promise.resolve(),
  }
  let faker = createFaker(seed)

  const renew = ({
    populate = (db) => seedDatabase(db, seed, resolved, ctx.clock.now()),
    skip,
    keepJournal = false,
  }: {
    populate?: (db: Database) => Promise<void>
    skip?: Partial<Record<IdKind, number>>
    keepJournal?: boolean
  } = {}): Promise<void> => {
    const { deterministic, idempotency, rateLimit } = resolved
    const db = createDatabase({ indexEmails: resolved.uniqueEmail })
    ctx.db = db
    ctx.nextId = createIdGenerator({
      seed,
      deterministic,
      ...(skip && { skip }),
    })
    ctx.random = deterministic
      ? createSeededRandom(seed, 'latency')
      : createCryptoRandom()
    ctx.idempotency = createIdempotencyStore({
      ttlMs: idempotency.ttlSeconds * 1000,
      maxEntries: idempotency.maxEntries,
      maxEntriesPerAccount: idempotency.maxEntriesPerAccount,
    })
    ctx.rateLimiter = rateLimit ? createRateLimiter(rateLimit) : undefined
    ctx.personaLimiter = createRateLimiter(PERSONA_RATE_LIMIT)
    if (!keepJournal) {
      ctx.journal.clear()
      ctx.scenarios.clear()
    }
    ctx.clock.reset()
    ctx.accounts.clear({ keepQueues: keepJournal })
    faker = createFaker(seed ^ 0x5bd1e995)
    ctx.seeded = false
    ctx.ready = populate(db).then(() => {
      if (ctx.db === db) ctx.seeded = true
    })
    return ctx.ready
  }

  const readable = (): Database => {
    if (!ctx.seeded) {
      throw new Error(
        'Failed to read the sandbox: it is still seeding. Await sandbox.ready (or the promise that reset() returns) first.',
      )
    }
    return ctx.db
  }

  const tokenView = (record: TokenRecord): TokenView => ({
    id: record.id,
    account_id: record.account_id,
    token: maskSecret(record.secret),
    scopes: [...record.scopes],
    expires_in: record.expires_in,
    expires_at: record.expires_at,
    created_at: record.created_at,
    issued_by: record.issued_by,
    expired:
      ctx.accounts.clockFor(record.account_id).now().getTime() >=
      Date.parse(record.expires_at),
  })

  const accountView = (db: Database, id: string): AccountView | undefined => {
    const account = db.accountById(id)
    if (!account) return undefined
    return {
      id: account.id,
      name: account.name,
      created_at: account.created_at,
      api_keys: db.apiKeysOf(id).map((key) => ({
        id: key.id,
        key: maskSecret(key.secret),
        revoked: key.revoked,
        created_at: key.created_at,
      })),
      customer_count: db.customersOf(id).length,
      token_count: db.tokensOf(id).length,
    }
  }

  const sandbox: SandboxCore = {
    fetch: (request) => router.fetch(request),
    get ready() {
      return ctx.ready
    },
    get seed() {
      return seed
    },
    options: resolved,
    get db() {
      const { accounts, apiKeys, customers, tokens } = readable()
      return { accounts, apiKeys, customers, tokens }
    },
    reset(nextSeed) {
      if (nextSeed !== undefined) {
        if (
          !Number.isInteger(nextSeed) ||
          nextSeed < 0 ||
          nextSeed > 0xffffffff
        ) {
          throw new RangeError(
            `Failed to reset the sandbox: the seed must be a whole number from 0 to 4294967295 (got ${String(nextSeed)}).`,
          )
        }
        seed = nextSeed
      }
      return renew()
    },
    clock: ctx.clock,
    journal: ctx.journal,
    scenarios: ctx.scenarios,
    account: (accountOrKey) => accountControls(accountOrKey),
    async createApiKey({ accountName } = {}) {
      await ctx.ready
      const { db, nextId } = ctx
      // @note The inserts below await, so accounts still being made count
      // too: concurrent calls never pass the limit between them.
      checkRoom(db, resolved, 'account', undefined, pendingAccounts)
      pendingAccounts++
      try {
        const now = ctx.clock.now().toISOString()
        const account = await db.insertAccount({
          id: nextId('account'),
          name: accountName ?? seedAccountName(faker),
          created_at: now,
        })
        const key = await db.insertApiKey({
          id: nextId('apiKeyId'),
          account_id: account.id,
          secret: nextId('apiKey'),
          revoked: false,
          created_at: now,
        })
        return { apiKey: key.secret, accountId: account.id }
      } finally {
        pendingAccounts--
      }
    },
    accounts: {
      list: () => {
        const db = readable()
        return db.accounts.all().map((account) => accountView(db, account.id)!)
      },
      get: (id) => accountView(readable(), id),
    },
    customers: {
      list: ({ accountId } = {}) => {
        const db = readable()
        const records =
          accountId === undefined
            ? db.customers.all()
            : db.customersOf(accountId)
        return records.map((record) => ({ ...record }))
      },
      get: (id) => {
        const record = readable().customerById(id)
        return record && { ...record }
      },
      count: ({ accountId } = {}) => {
        const db = readable()
        return accountId === undefined
          ? db.customers.count()
          : db.customersOf(accountId).length
      },
    },
    tokens: {
      list: ({ accountId } = {}) => {
        const db = readable()
        const records =
          accountId === undefined ? db.tokens.all() : db.tokensOf(accountId)
        return records.map(tokenView)
      },
      get: (id) => {
        const record = readable().tokenById(id)
        return record && tokenView(record)
      },
    },
    state: () => ({
      now: ctx.clock.now().toISOString(),
      seed,
      accounts: sandbox.accounts.list(),
      customers: sandbox.customers.list(),
      tokens: sandbox.tokens.list(),
    }),
    assumptions: () => assumptionLedger(resolved),
    dump() {
      const db = readable()
      const copy = <T extends object>(records: readonly T[]): T[] =>
        records.map((r) => ({ ...r }))
      return {
        format: SANDBOX_DATA_FORMAT,
        version: SANDBOX_DATA_VERSION,
        seed,
        clock: { now: ctx.clock.now().toISOString(), frozen: ctx.clock.frozen },
        ...accountClocks(),
        accounts: copy(db.accounts.all()),
        api_keys: copy(db.apiKeys.all()),
        customers: copy(db.customers.all()),
        tokens: copy(db.tokens.all()),
      }
    },
    async load(input) {
      const data = parseSandboxData(input)
      seed = data.seed
      await renew({ populate: (db) => insertData(db, data) })
      if (data.clock.frozen) ctx.clock.set(data.clock.now)
      setAccountClocks(data)
    },
    async snapshot(name) {
      await ctx.ready
      checkSnapshotName(name)
      const max = resolved.limits.snapshots
      if (!snapshots.has(name) && snapshots.size >= max) {
        throw new LimitReachedError(
          'limits.snapshots',
          `Failed to take the snapshot "${name}": ${snapshots.size} are kept, the most that limits.snapshots (${max}) allows. ${limitHint('limits.snapshots', 'Take it under the name of one to replace, reset the sandbox')}`,
        )
      }
      const data = sandbox.dump()
      const created_at = ctx.clock.now().toISOString()
      snapshots.set(name, { data, created_at })
      return {
        name,
        created_at,
        customers: data.customers.length,
        tokens: data.tokens.length,
      }
    },
    async restore(name) {
      const snapshot = snapshots.get(name)
      if (!snapshot) {
        throw new RangeError(
          `Failed to restore the snapshot "${name}": there is none by that name. Snapshots: ${[...snapshots.keys()].join(', ') || 'none'}.`,
        )
      }
      const { data } = snapshot
      await renew({ populate: (db) => insertData(db, data), keepJournal: true })
      ctx.clock.set(data.clock.now)
      if (!data.clock.frozen) ctx.clock.reset()
      setAccountClocks(data)
    },
    snapshots: () =>
      [...snapshots].map(([name, { data, created_at }]) => ({
        name,
        created_at,
        customers: data.customers.length,
        tokens: data.tokens.length,
      })),
    export() {
      const data = sandbox.dump()
      return {
        format: SESSION_FORMAT,
        version: SESSION_VERSION,
        exported_at: new Date().toISOString(),
        options: serializableOptions(resolved),
        data,
        journal: ctx.journal.list() as unknown as Record<string, unknown>[],
        id_draws: ctx.nextId.draws(),
      }
    },
  }

  /** The controls of an account named by its id or one of its API keys. */
  function accountControls(accountOrKey: string): AccountControls {
    const db = readable()
    let accountId: string | undefined = db.accountById(accountOrKey)?.id
    if (accountId === undefined) {
      for (const found of db.credentialsByHash(accountOrKey) ?? []) {
        if (found.kind === 'api-key' && found.record.secret === accountOrKey)
          accountId = found.record.account_id
      }
    }
    if (accountId === undefined) {
      throw new RangeError(
        `Failed to reach an account's controls: ${JSON.stringify(maskSecret(String(accountOrKey)))} is neither an account id nor an API key of this sandbox. Pass the accountId or apiKey that createApiKey() returned.`,
      )
    }
    return ctx.accounts.controls(accountId)
  }

  // Only accounts with a clock of their own add the field: data without
  // them stays byte for byte what it was.
  function accountClocks(): Pick<SandboxData, 'account_clocks'> {
    const clocks = ctx.accounts.clocks()
    return clocks.length === 0 ? {} : { account_clocks: clocks }
  }

  function setAccountClocks(data: SandboxData): void {
    for (const saved of data.account_clocks ?? []) {
      // A running clock (clockAfterSet: 'running') runs on from its saved time.
      ctx.accounts.controls(saved.account_id).clock.set(saved.now)
    }
  }

  const router = createRouter(ctx, [
    ...OPERATIONS.map((spec) => operationRoute(ctx, spec)),
    ...sandboxRoutes(ctx, sandbox),
    ...accountRoutes(ctx, sandbox),
  ])
  if (session) {
    const { data, journal, id_draws } = session
    renew({ populate: (db) => insertData(db, data), skip: id_draws })
    for (const entry of journal.toReversed())
      ctx.journal.record(entry as unknown as JournalEntry)
    if (data.clock.frozen) ctx.clock.set(data.clock.now)
    setAccountClocks(data)
  } else {
    renew()
  }
  return { sandbox, router }
}

async function insertData(db: Database, data: SandboxData): Promise<void> {
  await Promise.all([
    ...data.accounts.map((r) => db.insertAccount(r)),
    ...data.api_keys.map((r) => db.insertApiKey(r)),
    ...data.customers.map((r) => db.insertCustomer(r)),
    ...data.tokens.map((r) => db.insertToken(r)),
  ])
}

function checkSnapshotName(name: unknown): void {
  if (typeof name !== 'string' || !/^[\w.-]{1,64}$/.test(name)) {
    throw new RangeError(
      `Failed to take a snapshot: its name must be 1 to 64 letters, digits, "_", "." or "-" (got ${JSON.stringify(name)}).`,
    )
  }
}

/** The options a session export carries: everything but functions and the admin token. */
function serializableOptions(
  options: ResolvedOptions,
): Record<string, unknown> {
  const {
    errorFormat: _e,
    onRequest: _r,
    onSeedProgress: _p,
    baseUrl,
    adminToken: _a,
    ...rest
  } = options
  return { ...rest, ...(baseUrl && { baseUrl: baseUrl.href }) }
}

function parseSession(input: unknown): SandboxSession {
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
  throw new TypeError(
    `Failed to create a sandbox from a session: ${issue.path.join('.') || 'the document'}: ${issue.message}. Pass what sandbox.export() or GET /__sandbox/export returned.`,
  )
}

function parseSandboxData(input: unknown): SandboxData {
  const result = SandboxDataSchema.safeParse(input)
  if (result.success) return result.data
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

// How many customers a large seed inserts between two progress reports.
const SEED_BATCH = 5000

async function seedDatabase(
  db: Database,
  seed: number,
  options: ResolvedOptions,
  now: Date,
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
      if (++done % SEED_BATCH === 0) options.onSeedProgress?.(done, total)
    }
    await Promise.all(pending)
  }
  if (total > 0) options.onSeedProgress?.(total, total)
}
