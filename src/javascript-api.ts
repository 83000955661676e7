// The sandbox's JavaScript API: reset, dump and load, snapshots, read views, keys, export.
import type { AccountControls } from './request/account-controls.ts'
import { assumptionLedger } from './assumptions.ts'
import type { SandboxContext } from './request/context.ts'
import type { Database } from './model/db.ts'
import { unused, type IdKind } from './model/ids.ts'
import { checkRoom, limitHint, LimitReachedError } from './request/limits.ts'
import type { ResolvedOptions } from './options.ts'
import type {
  AccountView,
  SandboxCore,
  SnapshotInfo,
  TokenView,
} from './sandbox.ts'
import {
  ACCOUNT_NAME_MAX,
  SANDBOX_DATA_FORMAT,
  SANDBOX_DATA_VERSION,
  SESSION_FORMAT,
  SESSION_VERSION,
  textSchema,
  type SandboxData,
  type SandboxSession,
  type TokenRecord,
} from './model/schemas.ts'
import {
  createAccountNamer,
  insertSavedData,
  parseSandboxData,
} from './model/seeding.ts'
import { maskSecret } from './model/secrets.ts'
import { storedOnly } from './request/stored-records.ts'

// The rule of `account_name` in POST /__sandbox/api-keys.
const AccountNameSchema = textSchema('accountName', {
  min: 1,
  max: ACCOUNT_NAME_MAX,
})

/** Throws what `createApiKey()` says of an account name the HTTP call refuses. */
function checkAccountName(name: unknown): void {
  if (typeof name !== 'string') {
    throw new TypeError(
      `Failed to create an API key: accountName must be a string (got ${name === null ? 'null' : typeof name}).`,
    )
  }
  const parsed = AccountNameSchema.safeParse(name)
  if (!parsed.success) {
    throw new RangeError(
      `Failed to create an API key: ${parsed.error.issues[0]!.message}.`,
    )
  }
}

/** How `replaceData` makes the sandbox's new data. */
export interface DataReplacement {
  /** The seed of the new id streams and, without `fill`, of the default data. */
  seed: number
  /** Fills the new, empty database; by default with the default data of `seed`. */
  fill?: (db: Database) => Promise<void>
  /** Draws to skip in each id stream: a replayed session's next ids follow its recorded ones. */
  skipIds?: Partial<Record<IdKind, number>>
  /** Keeps the journal, the scenario queues and the accounts' queues and journal views (a restore). */
  keepJournal?: boolean
  /**
   * A whole state that another copy stored (`adopt`): what a fleet keeps
   * beside the state (its journal, its rate-limit counts) is that copy's
   * to forget, not this one's.
   */
  fromStore?: boolean
}

/** What the JavaScript API needs of the wiring besides the context. */
export interface JavaScriptApiWiring {
  /** The seed the sandbox's data was made from. */
  seed: number
  /** Answers a request through the route table. */
  fetch(request: Request): Promise<Response>
  /**
   * Replaces the sandbox's data: a new database filled as asked, new id
   * streams and request stores (idempotency, rate limits), the clock back to
   * the host's time. Settles when the new data is in.
   */
  replaceData(replacement: DataReplacement): Promise<void>
  /**
   * Runs a change of the JavaScript API (`reset`, `load`, `restore`) and
   * stores what it changed before it settles, as a `/__sandbox/` call's
   * change is stored, when the sandbox has a durable store.
   */
  stored(change: () => Promise<void>): Promise<void>
}

/**
 * The JavaScript API of one sandbox (`SandboxCore`) over its context: reset,
 * dump and load, snapshots, the read views, minted keys, export. Beside it,
 * `adopt`: `load()` that keeps the journal and the queued scenarios, for data
 * another copy of the same sandbox saved (a browser tab's), and `loadOwn`:
 * `load()` for data its own store wrote, taken without the rules a user's
 * data is held to.
 *
 * @example
 * const { sandbox } = createJavaScriptApi(ctx, { seed: 1, fetch: router.fetch, replaceData })
 * await sandbox.reset(2)
 */
export function createJavaScriptApi(
  ctx: SandboxContext,
  wiring: JavaScriptApiWiring,
): {
  sandbox: SandboxCore
  adopt(input: unknown): Promise<void>
  /**
   * `load()` for data this sandbox's own store wrote (its data file, its
   * localStorage): the records are taken as they are, past the limits or
   * not, as a sandbox never refuses to start on its own file.
   */
  loadOwn(input: unknown): Promise<void>
  /**
   * `sandbox.export()` with its record lists empty, all else read now: an
   * answer that shares one copy of the records among its clients (they
   * change only with `ctx.revision`) puts them in.
   */
  exportWithoutRecords(): SandboxSession
  /** `sandbox.dump()` with its record lists empty: the seed and the clocks, read now. */
  dumpWithoutRecords(): SandboxData
  /**
   * `reset` and `restore` that do not store what they changed: for a
   * `/__sandbox/` call, which stores it once it is done.
   */
  unstored: Pick<SandboxCore, 'reset' | 'restore'>
} {
  const { options } = ctx
  let seed = wiring.seed
  let nextAccountName = createAccountNamer(seed)
  // This sandbox's snapshots; with a store that keeps a fleet's, those this
  // replica took, without their data (the store keeps it).
  const snapshots = new Map<
    string,
    { info: SnapshotInfo; data?: SandboxData }
  >()
  const fleetStore = () => (ctx.storage?.snapshots ? ctx.storage : undefined)
  const fleet = () => import('./request/fleet-snapshots.ts')
  // Accounts that createApiKey() is inserting: they count for the limit.
  let accountsBeingCreated = 0

  const replaceData = (
    replacement: Omit<DataReplacement, 'seed'> = {},
  ): Promise<void> => {
    nextAccountName = createAccountNamer(seed)
    return wiring.replaceData({ seed, ...replacement })
  }

  /** The database once its data is all in; throws while it is still filling. */
  const settledDb = (): Database => {
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

  /** The controls of an account named by its id or one of its API keys. */
  const accountControls = (accountOrKey: string): AccountControls => {
    const db = settledDb()
    const named = typeof accountOrKey === 'string'
    let accountId: string | undefined = named
      ? db.accountById(accountOrKey)?.id
      : undefined
    if (named && accountId === undefined) {
      for (const found of db.credentialsByHash(accountOrKey) ?? []) {
        if (found.kind === 'api-key' && found.record.secret === accountOrKey)
          accountId = found.record.account_id
      }
    }
    if (accountId === undefined) {
      throw new RangeError(
        `Failed to reach an account's controls: ${named ? JSON.stringify(maskSecret(accountOrKey)) : String(accountOrKey)} is neither an account id nor an API key of this sandbox. Pass the accountId or apiKey that createApiKey() returned.`,
      )
    }
    return ctx.accounts.controls(accountId)
  }

  // Only accounts with a clock of their own add the field: data without
  // them stays byte for byte what it was.
  const savedAccountClocks = (): Pick<SandboxData, 'account_clocks'> => {
    const clocks = ctx.accounts.clocks()
    return clocks.length === 0 ? {} : { account_clocks: clocks }
  }

  /**
   * Replaces the data with saved data, already parsed; `keepJournal` as in
   * a restore, `fromStore` for a state another copy stored.
   */
  const loadData = async (
    data: SandboxData,
    keepJournal: boolean,
    fromStore = false,
  ): Promise<void> => {
    seed = data.seed
    await replaceData({
      fill: (db) => insertSavedData(db, data),
      keepJournal,
      fromStore,
    })
    restoreSavedClocks(ctx, data)
  }

  /** The snapshot kept under `name`; a `RangeError` when there is none. */
  const snapshotNamed = (name: string) => {
    const snapshot = snapshots.get(name)
    if (!snapshot?.data) {
      throw new RangeError(
        `Failed to restore the snapshot "${name}": there is none by that name. Snapshots: ${[...snapshots.keys()].join(', ') || 'none'}.`,
      )
    }
    return snapshot.data
  }

  const unstored: Pick<SandboxCore, 'reset' | 'restore'> = {
    reset(nextSeed) {
      checkSeed(nextSeed)
      if (nextSeed !== undefined) seed = nextSeed
      return replaceData()
    },
    async restore(name) {
      // A fleet's store keeps the data of its snapshots.
      const store = fleetStore()
      const data = store
        ? await (await fleet()).snapshotData(store, name)
        : snapshotNamed(name)
      await replaceData({
        fill: (db) => insertSavedData(db, data),
        keepJournal: true,
      })
      restoreSavedClocks(ctx, data)
    },
  }

  /** Saved data around `records`: what `dump()` gives besides them is read now. */
  const dumpWith = (records: Pick<SandboxData, RecordList>): SandboxData => ({
    format: SANDBOX_DATA_FORMAT,
    version: SANDBOX_DATA_VERSION,
    seed,
    clock: {
      now: ctx.clock.now().toISOString(),
      frozen: ctx.clock.frozen,
      // A running clock that was moved runs on from `now` when loaded.
      ...(ctx.clock.moved && !ctx.clock.frozen && { moved: true }),
    },
    ...savedAccountClocks(),
    ...records,
  })

  /** The session around saved `data`: options, journal and id positions as they are now. */
  const exportWith = (data: SandboxData): SandboxSession => ({
    format: SESSION_FORMAT,
    version: SESSION_VERSION,
    exported_at: new Date().toISOString(),
    options: sessionOptions(options),
    data,
    journal: ctx.journal.list() as unknown as Record<string, unknown>[],
    id_draws: ctx.nextId.draws(),
  })

  const sandbox: SandboxCore = {
    fetch(input, init) {
      const request =
        typeof input === 'string' || input instanceof URL || init !== undefined
          ? new Request(input, init)
          : input
      // @note As the platform's fetch does: a request whose signal is
      // aborted before it is sent is never sent, so nothing is stored.
      if (request.signal.aborted) return Promise.reject(request.signal.reason)
      // @note As the platform's fetch does: the body can be read only once.
      if (request.bodyUsed) {
        return Promise.reject(
          new TypeError(
            'Failed to answer a request through sandbox.fetch: its body was already read. Pass a new Request each time, or request.clone() before reading it.',
          ),
        )
      }
      return wiring.fetch(request)
    },
    get ready() {
      return ctx.ready
    },
    get seed() {
      return seed
    },
    options,
    get db() {
      const { accounts, apiKeys, customers, tokens } = settledDb()
      return { accounts, apiKeys, customers, tokens }
    },
    reset(nextSeed) {
      checkSeed(nextSeed)
      return wiring.stored(() => unstored.reset(nextSeed))
    },
    clock: ctx.clock,
    journal: ctx.journal,
    scenarios: ctx.scenarios,
    account: accountControls,
    async createApiKey({ accountName } = {}) {
      if (accountName !== undefined) checkAccountName(accountName)
      await ctx.ready
      const { db, nextId } = ctx
      // @note The inserts below await, so accounts still being made count
      // too: concurrent calls never pass the limit between them.
      checkRoom(db, options, 'account', undefined, accountsBeingCreated)
      accountsBeingCreated++
      try {
        const now = ctx.clock.now().toISOString()
        // @note Records seeded through sandbox.db may hold the next ids.
        const account = await db.insertAccount({
          id: unused(() => nextId('account'), db.accountById),
          name: accountName ?? nextAccountName(),
          created_at: now,
        })
        const key = await db.insertApiKey({
          id: unused(() => nextId('apiKeyId'), db.apiKeyById),
          account_id: account.id,
          secret: unused(() => nextId('apiKey'), db.secretHeld),
          revoked: false,
          created_at: now,
        })
        return { apiKey: key.secret, accountId: account.id }
      } finally {
        accountsBeingCreated--
      }
    },
    accounts: {
      list: () => {
        const db = settledDb()
        // @note An account another replica's write is adding is in the
        // collection a moment before its index: listed once it is whole.
        return db.accounts.all().flatMap((a) => accountView(db, a.id) ?? [])
      },
      get: (id) => accountView(settledDb(), id),
    },
    customers: {
      list: ({ accountId } = {}) => {
        const db = settledDb()
        const records =
          accountId === undefined
            ? db.customers.all()
            : db.customersOf(accountId)
        return records.map((record) => ({ ...record }))
      },
      get: (id) => {
        const record = settledDb().customerById(id)
        return record && { ...record }
      },
      count: ({ accountId } = {}) => {
        const db = settledDb()
        return accountId === undefined
          ? db.customers.count()
          : db.customersOf(accountId).length
      },
    },
    tokens: {
      list: ({ accountId } = {}) => {
        const db = settledDb()
        const records =
          accountId === undefined ? db.tokens.all() : db.tokensOf(accountId)
        return records.map(tokenView)
      },
      get: (id) => {
        const record = settledDb().tokenById(id)
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
    assumptions: () => assumptionLedger(options),
    dump() {
      const db = settledDb()
      const copy = <T extends object>(records: readonly T[]): T[] =>
        records.map((r) => ({ ...r }))
      return dumpWith({
        accounts: copy(db.accounts.all()),
        api_keys: copy(db.apiKeys.all()),
        customers: copy(db.customers.all()),
        tokens: copy(db.tokens.all()),
      })
    },
    async load(input) {
      // @note Data a user hands in is held to the rules of the API (no
      // record without its account, none past a limit), and checked before
      // anything is replaced or stored: refused, the sandbox keeps its data.
      const data = parseSandboxData(input, options.limits)
      return wiring.stored(() => loadData(data, false))
    },
    async snapshot(name) {
      await ctx.ready
      checkSnapshotName(name)
      const max = options.limits.snapshots
      const store = fleetStore()
      // @note Restored, a record whose write was then refused would come
      // back in every replica, though no call was answered 201 for it.
      const data = await storedOnly(ctx, sandbox.dump())
      const info = {
        name,
        created_at: ctx.clock.now().toISOString(),
        customers: data.customers.length,
        tokens: data.tokens.length,
      }
      // @note A fleet's store counts the snapshots of every replica.
      if (
        store
          ? !(await (await fleet()).takeSnapshot(store, info, data, max))
          : !snapshots.has(name) && snapshots.size >= max
      ) {
        throw new LimitReachedError(
          'limits.snapshots',
          `Failed to take the snapshot "${name}": ${store ? max : snapshots.size} are kept, the most that limits.snapshots (${max}) allows. ${limitHint('limits.snapshots', 'Take it under the name of one to replace, reset the sandbox')}`,
        )
      }
      snapshots.set(name, store ? { info } : { info, data })
      return { ...info }
    },
    restore: (name) => wiring.stored(() => unstored.restore(name)),
    snapshots: () => [...snapshots.values()].map(({ info }) => ({ ...info })),
    export: () => exportWith(sandbox.dump()),
  }
  return {
    sandbox,
    unstored,
    adopt: async (input) => loadData(parseSandboxData(input), true, true),
    loadOwn: (input) =>
      wiring.stored(async () => loadData(parseSandboxData(input), false)),
    exportWithoutRecords: () => {
      settledDb()
      return exportWith(dumpWith(NO_RECORDS))
    },
    dumpWithoutRecords: () => dumpWith(NO_RECORDS),
  }
}

/** The record lists of saved data: what grows with the data. */
type RecordList = 'accounts' | 'api_keys' | 'customers' | 'tokens'

/** The record lists of saved data, empty. */
const NO_RECORDS: Pick<SandboxData, RecordList> = {
  accounts: [],
  api_keys: [],
  customers: [],
  tokens: [],
}

/**
 * Sets the sandbox clock (when it was saved frozen) and the accounts' own
 * clocks from saved data, as `load()`, `restore()` and a replayed session do.
 *
 * @example
 * restoreSavedClocks(ctx, session.data)
 */
export function restoreSavedClocks(
  ctx: SandboxContext,
  data: SandboxData,
): void {
  if (data.clock.frozen || data.clock.moved) ctx.clock.set(data.clock.now)
  for (const saved of data.account_clocks ?? []) {
    // A running clock (clockAfterSet: 'running') runs on from its saved time.
    ctx.accounts.controls(saved.account_id).clock.set(saved.now)
  }
}

function accountView(db: Database, id: string): AccountView | undefined {
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

function checkSeed(seed: number | undefined): void {
  if (
    seed !== undefined &&
    (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
  ) {
    throw new RangeError(
      `Failed to reset the sandbox: the seed must be a whole number from 0 to 4294967295 (got ${typeof seed === 'string' ? JSON.stringify(seed) : String(seed)}).`,
    )
  }
}

function checkSnapshotName(name: unknown): void {
  if (typeof name !== 'string' || !/^[\w.-]{1,64}$/.test(name)) {
    throw new RangeError(
      `Failed to take a snapshot: its name must be 1 to 64 letters, digits, "_", "." or "-" (got ${JSON.stringify(name)}).`,
    )
  }
}

/** The options a session export carries: everything but functions and the admin token. */
function sessionOptions(options: ResolvedOptions): Record<string, unknown> {
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
