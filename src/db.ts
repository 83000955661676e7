import { Collection } from '@msw/data'
import {
  AccountRecordSchema,
  ApiKeyRecordSchema,
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

/** The records of one kind that the API creates, in the order they were made. */
export interface RecordList<T> {
  all(): readonly T[]
  count(): number
}

/**
 * The data model. Accounts and API keys are @msw/data Collections. Customers
 * and tokens, which every create adds to, are plain lists: @msw/data's
 * `create` re-validates, deep-copies and tags each record with a Map, which
 * measured a third of a whole create on the server's path. Every record is
 * still checked against its zod schema where it comes from outside (request
 * bodies, loaded data); the Map indexes keep the request path free of linear
 * scans.
 */
export interface Database {
  accounts: Collection<typeof AccountRecordSchema>
  apiKeys: Collection<typeof ApiKeyRecordSchema>
  customers: RecordList<CustomerRecord>
  tokens: RecordList<TokenRecord>
  /** Finds the credentials whose secret hashes like `secret`; compare each in constant time. */
  credentialsByHash(secret: string): readonly Credential[] | undefined
  accountById(id: string): AccountRecord | undefined
  /** How many accounts there are. */
  accountCount(): number
  /** How many records there are in all: accounts, API keys, customers and tokens. */
  recordCount(): number
  /** The API keys of one account, oldest first. */
  apiKeysOf(accountId: string): readonly ApiKeyRecord[]
  customersOf(accountId: string): readonly CustomerRecord[]
  tokensOf(accountId: string): readonly TokenRecord[]
  customerById(id: string): CustomerRecord | undefined
  tokenById(id: string): TokenRecord | undefined
  insertAccount(record: AccountRecord): Promise<AccountRecord>
  insertApiKey(record: ApiKeyRecord): Promise<ApiKeyRecord>
  /** Adds a customer built from validated input; no copy is made. */
  insertCustomer(record: CustomerRecord): CustomerRecord
  /** Adds a token built from validated input; no copy is made. */
  insertToken(record: TokenRecord): TokenRecord
  /**
   * Takes back a record that an operation just created (its write to the data
   * file failed), from the list and every index.
   */
  remove(created: CreatedRecord): void
  /** Whether `email` (case-insensitively) belongs to a customer of the account. */
  emailTaken(accountId: string, email: string): boolean
}

/** The key under which an email is indexed within one account. */
export const emailKey = (accountId: string, email: string): string =>
  `email:${accountId}:${email.toLowerCase()}`

/**
 * Creates an empty data model. A reset makes a new one rather than clearing
 * the collections, whose `clear()` costs O(n²) at scale.
 *
 * @example
 * const db = createDatabase({ indexEmails: true })
 * db.insertCustomer({ id: 'cus_…', account_id: 'acct_…', name: 'Ada', email: 'ada@example.com', created_at: new Date().toISOString() })
 */
export function createDatabase(
  options: { indexEmails: boolean } = { indexEmails: false },
): Database {
  const accounts = new Collection({ schema: AccountRecordSchema })
  const apiKeys = new Collection({ schema: ApiKeyRecordSchema })
  const customerList: CustomerRecord[] = []
  const tokenList: TokenRecord[] = []
  const customers: RecordList<CustomerRecord> = {
    all: () => customerList,
    count: () => customerList.length,
  }
  const tokens: RecordList<TokenRecord> = {
    all: () => tokenList,
    count: () => tokenList.length,
  }

  // A bucket is one credential, or a list once two secrets share a hash: one
  // array per token would be most of what a token keeps alive.
  const byHash = new Map<number, Credential | Credential[]>()
  const accountIndex = new Map<string, AccountRecord>()
  // Keys by account keep state and export linear in the number of accounts.
  const apiKeysByAccount = new Map<string, ApiKeyRecord[]>()
  let apiKeyCount = 0
  const customersByAccount = new Map<string, CustomerRecord[]>()
  const tokensByAccount = new Map<string, TokenRecord[]>()
  const customerIndex = new Map<string, CustomerRecord>()
  const tokenIndex = new Map<string, TokenRecord>()
  const push = <T>(map: Map<string, T[]>, key: string, value: T): void => {
    const list = map.get(key)
    if (list) list.push(value)
    else map.set(key, [value])
  }
  // A record taken back is one of the last made: search from the end.
  const drop = <T>(list: T[] | undefined, value: T): void => {
    const at = list?.lastIndexOf(value) ?? -1
    if (at !== -1) list!.splice(at, 1)
  }
  // With `indexEmails`, each account's normalised emails.
  const emails = new Set<string>()

  const indexCredential = (credential: Credential): void => {
    const hash = secretHash(credential.record.secret)
    const bucket = byHash.get(hash)
    if (bucket === undefined) byHash.set(hash, credential)
    else if (Array.isArray(bucket)) bucket.push(credential)
    else byHash.set(hash, [bucket, credential])
  }

  return {
    accounts,
    apiKeys,
    customers,
    tokens,
    credentialsByHash(secret) {
      const bucket = byHash.get(secretHash(secret))
      return bucket === undefined || Array.isArray(bucket) ? bucket : [bucket]
    },
    accountById: (id) => accountIndex.get(id),
    accountCount: () => accountIndex.size,
    recordCount: () =>
      accountIndex.size + apiKeyCount + customerList.length + tokenList.length,
    apiKeysOf: (accountId) => apiKeysByAccount.get(accountId) ?? [],
    customersOf: (accountId) => customersByAccount.get(accountId) ?? [],
    tokensOf: (accountId) => tokensByAccount.get(accountId) ?? [],
    customerById: (id) => customerIndex.get(id),
    tokenById: (id) => tokenIndex.get(id),
    emailTaken: (accountId, email) => emails.has(emailKey(accountId, email)),
    async insertAccount(record) {
      const created = await accounts.create(record)
      accountIndex.set(created.id, created)
      return created
    },
    async insertApiKey(record) {
      const created = await apiKeys.create(record)
      indexCredential({ kind: 'api-key', record: created })
      push(apiKeysByAccount, created.account_id, created)
      apiKeyCount++
      return created
    },
    insertCustomer(record) {
      customerList.push(record)
      push(customersByAccount, record.account_id, record)
      customerIndex.set(record.id, record)
      if (options.indexEmails && record.email !== undefined) {
        emails.add(emailKey(record.account_id, record.email))
      }
      return record
    },
    remove(created) {
      if ('customer' in created) {
        const record = created.customer
        if (customerIndex.get(record.id) !== record) return
        drop(customerList, record)
        drop(customersByAccount.get(record.account_id), record)
        customerIndex.delete(record.id)
        // @note With uniqueEmail no other customer of the account has it.
        if (options.indexEmails && record.email !== undefined) {
          emails.delete(emailKey(record.account_id, record.email))
        }
      } else {
        const record = created.token
        if (tokenIndex.get(record.id) !== record) return
        drop(tokenList, record)
        drop(tokensByAccount.get(record.account_id), record)
        tokenIndex.delete(record.id)
        const hash = secretHash(record.secret)
        const bucket = byHash.get(hash)
        if (Array.isArray(bucket)) {
          const rest = bucket.filter((c) => c.record !== record)
          if (rest.length === 1) byHash.set(hash, rest[0]!)
          else byHash.set(hash, rest)
        } else if (bucket?.record === record) {
          byHash.delete(hash)
        }
      }
    },
    insertToken(record) {
      tokenList.push(record)
      indexCredential({ kind: 'token', record })
      push(tokensByAccount, record.account_id, record)
      tokenIndex.set(record.id, record)
      return record
    },
  }
}
