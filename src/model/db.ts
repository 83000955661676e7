// The data model: @msw/data collections and the indexes that follow every write to them.
import { Collection } from '@msw/data'
import {
  AccountRecordSchema,
  ApiKeyRecordSchema,
  CustomerRecordSchema,
  TokenRecordSchema,
  type AccountRecord,
  type ApiKeyRecord,
  type CustomerRecord,
  type TokenRecord,
} from './schemas.ts'
import { secretHash } from './secrets.ts'

/** A credential the sandbox knows: an API key or a token. */
export type Credential =
  | { kind: 'api-key'; record: ApiKeyRecord }
  | { kind: 'token'; record: TokenRecord }

/** A record that an operation created, as one line of the data file holds it. */
export type CreatedRecord =
  { customer: CustomerRecord } | { token: TokenRecord }

/**
 * The sandbox's data as @msw/data Collections, public as `sandbox.db`: query
 * and seed them in tests as any @msw/data collection. A record created,
 * updated or deleted here is validated by its schema and behaves as if the
 * API had made it: it counts for `uniqueEmail` and the limits, and an API key
 * or token is usable as a credential. Deleting an account deletes its API
 * keys, customers and tokens. A record whose id is taken, or a
 * credential whose secret is, is refused with a `RangeError`.
 *
 * @example
 * await sandbox.db.customers.create({ id: 'cus_ada', account_id: 'acct_DemoAccount001', name: 'Ada', email: 'ada@example.com', created_at: new Date().toISOString() })
 * sandbox.db.customers.findFirst((q) => q.where({ email: 'ada@example.com' }))
 */
export interface SandboxCollections {
  accounts: Collection<typeof AccountRecordSchema>
  apiKeys: Collection<typeof ApiKeyRecordSchema>
  customers: Collection<typeof CustomerRecordSchema>
  tokens: Collection<typeof TokenRecordSchema>
}

/**
 * The data model: the collections, and Map indexes that follow every write
 * to them (see `follow`), so that no request-path lookup scans a collection.
 */
export interface Database extends SandboxCollections {
  /** The credentials whose secret digests like `secret`; compare each in constant time. */
  credentialsByHash(secret: string): readonly Credential[] | undefined
  /** Whether an API key or token has `secret` (a new one must not). */
  secretHeld(secret: string): boolean
  accountById(id: string): AccountRecord | undefined
  /** How many accounts there are. */
  accountCount(): number
  /**
   * How many records there are in all: accounts, API keys, customers and
   * tokens, with those `elsewhere` counts.
   */
  recordCount(): number
  /**
   * Customers and tokens that a shared store holds and this copy has not
   * loaded (accounts no request of this replica has asked for yet): they
   * count towards `limits.records` as the loaded ones do.
   */
  elsewhere: number
  /** The API keys of one account, oldest first. */
  apiKeysOf(accountId: string): readonly ApiKeyRecord[]
  customersOf(accountId: string): readonly CustomerRecord[]
  tokensOf(accountId: string): readonly TokenRecord[]
  apiKeyById(id: string): ApiKeyRecord | undefined
  customerById(id: string): CustomerRecord | undefined
  tokenById(id: string): TokenRecord | undefined
  insertAccount(record: AccountRecord): Promise<AccountRecord>
  insertApiKey(record: ApiKeyRecord): Promise<ApiKeyRecord>
  /**
   * Adds a customer. It is in the indexes at once (counted, its id and email
   * taken) so that no concurrent create passes the checks it has passed; the
   * collection holds it once the promise settles.
   */
  insertCustomer(record: CustomerRecord): Promise<CustomerRecord>
  /** Adds a token, indexed at once as `insertCustomer` is. */
  insertToken(record: TokenRecord): Promise<TokenRecord>
  /**
   * Takes back a record that an operation just created (its write to the data
   * file failed), from the collection and every index.
   */
  remove(created: CreatedRecord): void
  /** Whether `email` (case-insensitively) belongs to a customer of the account. */
  emailTaken(accountId: string, email: string): boolean
  /**
   * How many updates and deletes went through the collections so far: while
   * it stays, records were only added, at the end of each collection.
   */
  edits(): number
  /**
   * Rebuilds the indexes from the collections at the next lookup, after
   * records were dropped from a collection's own array (`all()`) in place:
   * a replica letting go of an account, which a shared store keeps. Not an
   * edit of the data, so `edits()` stays.
   */
  reindex(): void
}

/** The key under which an email is indexed within one account. */
export const emailKey = (accountId: string, email: string): string =>
  `email:${accountId}:${email.toLowerCase()}`

/** The indexes of one kind of record: by id and, for owned records, by account. */
interface Index<T extends { id: string }> {
  byId: Map<string, T>
  add(record: T): void
  drop(record: T): void
  /**
   * Puts `next` where `prev` is indexed: the same record, stored anew (the
   * schema's parse of it, so with the same id, account, email and secret).
   */
  swap(prev: T, next: T): void
}

/** An index kept beside `byId`: credentials by digest, emails by account. */
interface SideIndex<T> {
  add(record: T): void
  drop(record: T): void
  /** Points at `next` in place of `prev` (see `Index.swap`), if it keeps records. */
  swap?(prev: T, next: T): void
}

function createIndex<T extends { id: string; account_id?: string }>(
  byAccount: Map<string, T[]> | undefined,
  also: SideIndex<T> = { add() {}, drop() {} },
): Index<T> {
  const byId = new Map<string, T>()
  // @note Where each record went in its account's list. It can only have
  // moved towards the front since (a drop splices the list), so a swap
  // searches back from there: searching from the end, a load that reserves
  // thousands of records at once scanned every later one for each, and a
  // start on 100k customers took seconds.
  const placed = new WeakMap<T, number>()
  return {
    byId,
    swap(prev, next) {
      byId.set(next.id, next)
      if (byAccount && next.account_id !== undefined) {
        const list = byAccount.get(next.account_id)
        const at = list
          ? list.lastIndexOf(prev, placed.get(prev) ?? list.length - 1)
          : -1
        // @note `next`, the stored record, is never swapped again: no place
        // is kept for it, so the map does not grow with every record made.
        if (at !== -1) list![at] = next
      }
      also.swap?.(prev, next)
    },
    add(record) {
      // A rebuild may have indexed it between its store and its create's end.
      if (byId.get(record.id) === record) return
      byId.set(record.id, record)
      if (byAccount && record.account_id !== undefined) {
        const list = byAccount.get(record.account_id)
        if (list) list.push(record)
        else byAccount.set(record.account_id, [record])
        placed.set(record, (list?.length ?? 1) - 1)
      }
      also.add(record)
    },
    drop(record) {
      if (byId.get(record.id) !== record) return
      byId.delete(record.id)
      if (byAccount && record.account_id !== undefined) {
        // A record taken back is one of the last made: search from the end.
        const list = byAccount.get(record.account_id)
        const at = list?.lastIndexOf(record) ?? -1
        if (at !== -1) list!.splice(at, 1)
      }
      also.drop(record)
    },
  }
}

const ANY_CHARACTER = /[^]/

/** The symbols under which @msw/data keeps a string on `record`. */
const stringKeys = (record: object): symbol[] =>
  Object.getOwnPropertySymbols(record).filter(
    (symbol) => typeof (record as Record<symbol, unknown>)[symbol] === 'string',
  )

/**
 * Flattens the string keys @msw/data keeps on a record under its own
 * symbols (every record of a collection has the same: pass them once found).
 * Its primary key is `crypto.randomUUID()`, which V8 builds as a rope of
 * about twenty pieces: several times the flat string's size, and twenty
 * objects more for every garbage collection to copy and mark. A regular
 * expression flattens the string it reads, in place, on every engine version
 * (unlike `charCodeAt`, which newer ones skip).
 *
 * @example
 * flattenKeys(await customers.create(record))
 */
export function flattenKeys(
  record: object,
  keys: readonly symbol[] = stringKeys(record),
): void {
  for (const key of keys) {
    const value: unknown = (record as Record<symbol, unknown>)[key]
    if (typeof value === 'string') ANY_CHARACTER.test(value)
  }
}

/** What `follow` needs to know of one collection besides its index. */
interface Following<T> {
  /** The record's kind with its article, for messages: "a customer". */
  noun: string
  /** Why `record` cannot be stored beside the others (its secret taken by a record other than `self`), if so. */
  conflict?(record: T, self: T | undefined): string | undefined
  /** Brings the indexes up to date, before a check reads them. */
  fresh(): void
  /** Called after an update or a delete went through the collection. */
  changed(): void
  /** Called after any write, a create's included, has landed. */
  wrote(): void
}

/**
 * Keeps `index` equal to what `collection` holds, whoever writes to it. Its
 * `create` (which `createMany` calls too) indexes the record it stores, and
 * refuses one whose id (or secret) another record has. Updates and deletes
 * report `changed` once they are done, so the indexes are rebuilt from the
 * collections: @msw/data's update hook runs before the schema's parse makes
 * the record it stores (and before an update is refused), and its `clear()`
 * reports only every other record. A record that `reserve` indexed before
 * its create is swapped for the stored one. Returns `take`, which deletes
 * one record and drops it from the indexes without a rebuild.
 */
function follow<T extends { id: string }>(
  // oxlint-disable-next-line no-explicit-any -- any record schema
  collection: Collection<any>,
  index: Index<T>,
  reserved: Map<string, T>,
  following: Following<T>,
): { take(record: T): void } {
  const { noun, conflict, fresh, changed, wrote } = following
  // Ids that a create still in progress claims.
  const claimed = new Set<string>()
  const refuse = (action: string, values: unknown, self?: T): void => {
    if (typeof values !== 'object' || values === null) return
    const record = values as T
    if (typeof record.id !== 'string') return
    fresh()
    const holder = index.byId.get(record.id)
    const reason =
      (holder !== undefined && holder !== self) ||
      (self === undefined && claimed.has(record.id))
        ? `the id ${JSON.stringify(record.id.slice(0, 100))} is already taken. Give each record an id of its own.`
        : conflict?.(record, self)
    if (reason !== undefined) {
      throw new RangeError(`Failed to ${action} ${noun}: ${reason}`)
    }
  }

  // @note Not a create hook: each event is a MessageEvent behind a revocable
  // Proxy, awaited per listener, which costs more than the indexing it runs.
  const create = collection.create.bind(collection)
  let keys: symbol[] | undefined
  collection.create = async (initialValues: unknown) => {
    const pending = reserved.get((initialValues as T | undefined)?.id ?? '')
    const ownReservation = pending !== undefined && pending === initialValues
    let claim: string | undefined
    if (!ownReservation) {
      refuse('create', initialValues)
      claim = (initialValues as T).id
      if (typeof claim === 'string') claimed.add(claim)
    }
    try {
      const record = (await create(initialValues)) as T
      keys ??= stringKeys(record)
      flattenKeys(record, keys)
      if (ownReservation && reserved.get(record.id) === pending) {
        reserved.delete(record.id)
        index.swap(pending, record)
      } else index.add(record)
      return record
    } finally {
      if (claim !== undefined) claimed.delete(claim)
      wrote()
    }
  }

  // The record an update starts from is the draft's, so a taken id or
  // secret is refused before anything changes.
  const guard =
    (data: (draft: T) => unknown) =>
    async (draft: T): Promise<void> => {
      fresh()
      const self = index.byId.get(draft.id)
      await data(draft)
      refuse('update', draft, self)
    }
  for (const method of ['update', 'updateMany'] as const) {
    const original = collection[method].bind(collection)
    collection[method] = async (
      predicate: unknown,
      options: { data: (draft: T) => unknown },
    ) => {
      try {
        // oxlint-disable-next-line no-explicit-any -- the method's own arguments
        return await (original as any)(predicate, {
          ...options,
          data: guard(options.data),
        })
      } finally {
        changed()
        wrote()
      }
    }
  }
  const remove = collection.delete.bind(collection)
  for (const method of ['delete', 'deleteMany', 'clear'] as const) {
    const original = collection[method].bind(collection)
    collection[method] = (...args: unknown[]) => {
      try {
        // oxlint-disable-next-line no-explicit-any -- the method's own arguments
        return (original as any)(...args)
      } finally {
        changed()
        wrote()
      }
    }
  }
  return {
    take(record) {
      fresh()
      index.drop(record)
      remove(record)
      wrote()
    },
  }
}

/**
 * Makes a delete of accounts (`delete`, `deleteMany`, `clear`) delete their
 * API keys, customers and tokens too, as the API never leaves a record
 * without its account. @note @msw/data's `onDelete: 'cascade'` belongs to
 * its relations, which hold records by reference on a relation property and
 * follow every create through hooks; the records here name their account by
 * `account_id`, as the data file and the API show them.
 */
function cascadeAccountDeletes({
  accounts,
  apiKeys,
  customers,
  tokens,
}: SandboxCollections): void {
  const cascade = (deleted: readonly AccountRecord[]): void => {
    if (deleted.length === 0) return
    const gone = new Set(deleted.map((account) => account.id))
    apiKeys.deleteMany((q) => q.where((r) => gone.has(r.account_id)))
    customers.deleteMany((q) => q.where((r) => gone.has(r.account_id)))
    tokens.deleteMany((q) => q.where((r) => gone.has(r.account_id)))
  }
  const remove = accounts.delete.bind(accounts)
  const removeMany = accounts.deleteMany.bind(accounts)
  const clear = accounts.clear.bind(accounts)
  accounts.delete = ((...args: Parameters<typeof remove>) => {
    const deleted = remove(...args)
    cascade(deleted === undefined ? [] : [deleted])
    return deleted
  }) as typeof remove
  accounts.deleteMany = (...args: Parameters<typeof removeMany>) => {
    const deleted = removeMany(...args)
    cascade(deleted)
    return deleted
  }
  accounts.clear = () => {
    // A copy: all() is the collection's own array, which clear() empties.
    const deleted = [...accounts.all()]
    clear()
    cascade(deleted)
  }
}

/**
 * Creates an empty data model. A reset makes a new one rather than clearing
 * the collections, whose `clear()` costs O(n²) at scale. `onWrite` hears
 * every write once it has landed, whoever made it (the API, seeding,
 * `sandbox.db`).
 *
 * @example
 * const db = createDatabase({ indexEmails: true })
 * await db.insertCustomer({ id: 'cus_…', account_id: 'acct_…', name: 'Ada', email: 'ada@example.com', created_at: new Date().toISOString() })
 */
export function createDatabase(
  options: { indexEmails: boolean; onWrite?: () => void } = {
    indexEmails: false,
  },
): Database {
  const accounts = new Collection({ schema: AccountRecordSchema })
  const apiKeys = new Collection({ schema: ApiKeyRecordSchema })
  const customers = new Collection({ schema: CustomerRecordSchema })
  const tokens = new Collection({ schema: TokenRecordSchema })

  // Credentials by the digest of their secret: equal secrets share a list.
  const byDigest = new Map<number, Credential[]>()
  const credentialIndex = <K extends Credential['kind']>(kind: K) => ({
    add(record: Extract<Credential, { kind: K }>['record']) {
      const digest = secretHash(record.secret)
      const credential = { kind, record } as Credential
      const list = byDigest.get(digest)
      if (list) list.push(credential)
      else byDigest.set(digest, [credential])
    },
    drop(record: Extract<Credential, { kind: K }>['record']) {
      const digest = secretHash(record.secret)
      const rest = byDigest.get(digest)?.filter((c) => c.record !== record)
      if (rest?.length) byDigest.set(digest, rest)
      else byDigest.delete(digest)
    },
    swap(
      prev: Extract<Credential, { kind: K }>['record'],
      next: Extract<Credential, { kind: K }>['record'],
    ) {
      const credential = byDigest
        .get(secretHash(prev.secret))
        ?.find((c) => c.record === prev)
      if (credential) credential.record = next
    },
  })
  // With `indexEmails`, how many customers of each account have an email
  // (counts: a stored record swapped in changes none).
  const emails = new Map<string, number>()
  const emailIndex = {
    add(record: CustomerRecord) {
      if (!options.indexEmails || record.email === undefined) return
      const key = emailKey(record.account_id, record.email)
      emails.set(key, (emails.get(key) ?? 0) + 1)
    },
    drop(record: CustomerRecord) {
      if (!options.indexEmails || record.email === undefined) return
      const key = emailKey(record.account_id, record.email)
      const count = (emails.get(key) ?? 0) - 1
      if (count > 0) emails.set(key, count)
      else emails.delete(key)
    },
  }

  // Keys, customers and tokens by account keep state and export linear in
  // the number of accounts.
  const apiKeysByAccount = new Map<string, ApiKeyRecord[]>()
  const customersByAccount = new Map<string, CustomerRecord[]>()
  const tokensByAccount = new Map<string, TokenRecord[]>()
  const byAccountMaps = [apiKeysByAccount, customersByAccount, tokensByAccount]
  const accountIndex = createIndex<AccountRecord>(undefined)
  const apiKeyIndex = createIndex(apiKeysByAccount, credentialIndex('api-key'))
  const customerIndex = createIndex(customersByAccount, emailIndex)
  const tokenIndex = createIndex(tokensByAccount, credentialIndex('token'))
  const reservedCustomers = new Map<string, CustomerRecord>()
  const reservedTokens = new Map<string, TokenRecord>()

  // Updates and deletes through the collections (sandbox.db, never the
  // request path) make the indexes stale; the next lookup rebuilds them.
  let stale = false
  let edits = 0
  const changed = (): void => {
    stale = true
    edits++
  }
  const wrote = options.onWrite ?? ((): void => {})
  const fresh = (): void => {
    if (!stale) return
    stale = false
    for (const map of [byDigest, emails, ...byAccountMaps]) map.clear()
    for (const index of [accountIndex, apiKeyIndex, customerIndex, tokenIndex])
      index.byId.clear()
    for (const record of accounts.all()) accountIndex.add(record)
    for (const record of apiKeys.all()) apiKeyIndex.add(record)
    for (const record of customers.all()) customerIndex.add(record)
    for (const record of tokens.all()) tokenIndex.add(record)
    // Records an operation reserved and the collection does not hold yet.
    const pending = <T extends { id: string }>(
      reserved: Map<string, T>,
      index: Index<T>,
    ) => {
      for (const [id, record] of reserved) {
        if (index.byId.has(id)) reserved.delete(id)
        else index.add(record)
      }
    }
    pending(reservedCustomers, customerIndex)
    pending(reservedTokens, tokenIndex)
  }
  // Every lookup first brings the indexes up to date.
  const read =
    <A extends unknown[], R>(lookup: (...args: A) => R) =>
    (...args: A): R => {
      fresh()
      return lookup(...args)
    }
  // Whether a credential other than `self` has `secret`.
  const secretHeld = (secret: string, self?: Credential['record']): boolean =>
    byDigest
      .get(secretHash(secret))
      ?.some((c) => c.record !== self && c.record.secret === secret) ?? false
  const secretTaken = (
    record: { secret?: unknown },
    self: ApiKeyRecord | TokenRecord | undefined,
  ): string | undefined => {
    const { secret } = record
    if (typeof secret !== 'string') return undefined
    return secretHeld(secret, self)
      ? 'its secret is already the secret of another API key or token. Give each credential a secret of its own.'
      : undefined
  }
  follow<AccountRecord>(accounts, accountIndex, new Map(), {
    noun: 'an account',
    fresh,
    changed,
    wrote,
  })
  cascadeAccountDeletes({ accounts, apiKeys, customers, tokens })
  follow<ApiKeyRecord>(apiKeys, apiKeyIndex, new Map(), {
    noun: 'an API key',
    conflict: secretTaken,
    fresh,
    changed,
    wrote,
  })
  const customersFollowed = follow(
    customers,
    customerIndex,
    reservedCustomers,
    { noun: 'a customer', fresh, changed, wrote },
  )
  const tokensFollowed = follow<TokenRecord>(
    tokens,
    tokenIndex,
    reservedTokens,
    {
      noun: 'a token',
      conflict: secretTaken,
      fresh,
      changed,
      wrote,
    },
  )

  /**
   * Indexes `record` now and stores it in `collection`: the checks an
   * operation made before its insert hold until the collection has it.
   */
  const reserve = async <T extends { id: string }>(
    collection: { create(record: T): Promise<T> },
    index: Index<T>,
    reserved: Map<string, T>,
    record: T,
  ): Promise<T> => {
    fresh()
    index.add(record)
    reserved.set(record.id, record)
    try {
      return await collection.create(record)
    } catch (error) {
      if (reserved.get(record.id) === record) reserved.delete(record.id)
      index.drop(record)
      wrote()
      throw error
    }
  }

  const database: Database = {
    accounts,
    apiKeys,
    customers,
    tokens,
    elsewhere: 0,
    credentialsByHash: read((secret: string) =>
      byDigest.get(secretHash(secret)),
    ),
    secretHeld: read((secret: string) => secretHeld(secret)),
    accountById: read((id: string) => accountIndex.byId.get(id)),
    accountCount: read(() => accountIndex.byId.size),
    recordCount: read(
      () =>
        accountIndex.byId.size +
        apiKeyIndex.byId.size +
        customerIndex.byId.size +
        tokenIndex.byId.size +
        database.elsewhere,
    ),
    apiKeysOf: read(
      (accountId: string) => apiKeysByAccount.get(accountId) ?? [],
    ),
    customersOf: read(
      (accountId: string) => customersByAccount.get(accountId) ?? [],
    ),
    tokensOf: read((accountId: string) => tokensByAccount.get(accountId) ?? []),
    apiKeyById: read((id: string) => apiKeyIndex.byId.get(id)),
    customerById: read((id: string) => customerIndex.byId.get(id)),
    tokenById: read((id: string) => tokenIndex.byId.get(id)),
    emailTaken: read((accountId: string, email: string) =>
      emails.has(emailKey(accountId, email)),
    ),
    edits: () => edits,
    insertAccount: (record) => accounts.create(record),
    insertApiKey: (record) => apiKeys.create(record),
    insertCustomer: (record) =>
      reserve(customers, customerIndex, reservedCustomers, record),
    insertToken: (record) =>
      reserve(tokens, tokenIndex, reservedTokens, record),
    remove(created) {
      // The records an insert resolved to are the collection's own.
      if ('customer' in created) customersFollowed.take(created.customer)
      else tokensFollowed.take(created.token)
    },
    reindex() {
      stale = true
    },
  }
  return database
}
