// The sandbox's public types: its views, its state and its API.
import type { RequestHandler } from 'msw'
import type { AccountControls } from './request/account-controls.ts'
import type { Assumption } from './assumptions.ts'
import type { SandboxCollections } from './model/db.ts'
import type { SandboxClock } from './model/clock.ts'
import type { Journal } from './request/journal.ts'
import type { ResolvedOptions } from './options.ts'
import type { Scenarios } from './request/scenarios.ts'
import type {
  CustomerRecord,
  SandboxData,
  SandboxSession,
} from './model/schemas.ts'

/** An API key as inspection shows it: masked. */
export interface ApiKeyView {
  id: string
  /** Masked, e.g. `sk_test_…0001`. */
  key: string
  revoked: boolean
  created_at: string
}

/** An account as inspection shows it. */
export interface AccountView {
  id: string
  name: string
  created_at: string
  api_keys: ApiKeyView[]
  customer_count: number
  token_count: number
}

/** A token as inspection shows it: masked, with its state on the sandbox clock. */
export interface TokenView {
  id: string
  account_id: string
  /** Masked, e.g. `tok_test_…9xQz`. */
  token: string
  scopes: string[]
  expires_in: number
  expires_at: string
  created_at: string
  issued_by: string
  expired: boolean
}

/** Everything the sandbox holds, as `GET /__sandbox/state` answers. */
export interface SandboxState {
  now: string
  seed: number
  accounts: AccountView[]
  customers: CustomerRecord[]
  tokens: TokenView[]
}

/** A filter of the read API. */
export interface AccountFilter {
  /** Only this account's records. */
  accountId?: string
}

/** A new account and its API key, from `createApiKey()`. */
export interface CreatedApiKey {
  /** The full secret: shown this once. */
  apiKey: string
  accountId: string
}

/** One sandbox: its handlers, its data and its controls. Two never share anything. */
export interface Sandbox extends SandboxCore {
  /**
   * MSW request handlers for both operations, the 404/405 answers under the
   * API's version prefixes, `/__sandbox/*` and `/openapi.json`.
   * @example setupServer(...sandbox.handlers)
   */
  readonly handlers: RequestHandler[]
}

/** A sandbox without MSW handlers, as the standalone server holds it. */
export interface SandboxCore {
  /**
   * Answers a request without MSW: the one way in, which the MSW handlers,
   * the browser's worker and the standalone server all call. A request the
   * sandbox does not serve gets a `404 not_found` problem. Takes what
   * `fetch` takes: a `Request`, or a URL and its init. As `fetch` does, it
   * rejects with the signal's reason a request whose signal is aborted
   * already, which is then never answered nor stored. Unlike `fetch`, it
   * answers a network error (a `networkError` scenario, a request a reset
   * dropped) with `Response.error()` (status 0, type `'error'`), which the
   * handlers turn into a rejected `fetch`, and a signal aborted once the
   * call began does not stop it: wrapped as an app's `fetch`, check
   * `response.type === 'error'`.
   * @example await sandbox.fetch(new Request('http://localhost/__sandbox/health'))
   * @example await sandbox.fetch('http://localhost/__sandbox/health')
   */
  fetch(input: Request | string | URL, init?: RequestInit): Promise<Response>
  /**
   * The data model as @msw/data Collections (accounts, API keys, customers,
   * tokens), to query and seed from tests. A record written here is
   * validated by its schema and behaves as if the API had made it. Read it
   * once `ready` has settled; a reset or load renews it.
   * @example await sandbox.db.customers.create({ id: 'cus_ada', account_id: 'acct_DemoAccount001', name: 'Ada', email: 'ada@example.com', created_at: new Date().toISOString() })
   * @see https://github.com/mswjs/data
   */
  readonly db: SandboxCollections
  /** Settles when seeding is done; the resolvers wait for it themselves. */
  readonly ready: Promise<void>
  /** The seed in force: the option's, or the last one `reset(seed)` was given. */
  readonly seed: number
  /** The options in force, defaults settled. */
  readonly options: ResolvedOptions
  /**
   * Back to the fixtures and the seeded data (with `seed`, a new one);
   * clears the clock, the journal, scenarios, idempotency keys and rate-limit windows.
   * On a server with a data file or a Redis store, the new state is stored
   * before it settles, as `POST /__sandbox/reset` stores it, and a fleet's
   * journal and rate-limit counts are cleared with it.
   * @example beforeEach(() => sandbox.reset())
   */
  reset(seed?: number): Promise<void>
  /** The sandbox clock. @example sandbox.clock.advance(3600_000) */
  readonly clock: SandboxClock
  /** The request journal, newest first. @example sandbox.journal.last()?.status */
  readonly journal: Journal
  /** The scenario queue. @example sandbox.scenarios.next('createToken', { status: 503 }) */
  readonly scenarios: Scenarios
  /**
   * One account's own clock, scenario queue and journal view, by its id or
   * one of its API keys: parallel tests, each with its own account, never
   * see each other's time or faults. Throws a `RangeError` for an unknown
   * account.
   *
   * @example
   * const { apiKey } = await sandbox.createApiKey()
   * sandbox.account(apiKey).clock.advance(3600_000) // this account's tokens expire
   * sandbox.account(apiKey).scenarios.next('createCustomer', { status: 503 })
   * sandbox.account(apiKey).journal.list() // this account's requests only
   * @see https://docs.stripe.com/billing/testing/test-clocks
   */
  account(accountOrApiKey: string): AccountControls
  /**
   * Mints a new account and its API key. An `accountName` is held to the
   * rule of `POST /__sandbox/api-keys` (1 to 200 characters, some visible,
   * no control characters); another rejects with a `TypeError` or
   * `RangeError` that says so.
   * @example const { apiKey } = await sandbox.createApiKey({ accountName: 'Acme' })
   */
  createApiKey(options?: { accountName?: string }): Promise<CreatedApiKey>
  /** Read access to accounts. @example sandbox.accounts.list() */
  readonly accounts: {
    list(): AccountView[]
    get(id: string): AccountView | undefined
  }
  /** Read access to customers. @example sandbox.customers.list({ accountId }) */
  readonly customers: {
    list(filter?: AccountFilter): CustomerRecord[]
    get(id: string): CustomerRecord | undefined
    count(filter?: AccountFilter): number
  }
  /** Read access to tokens, secrets masked. @example sandbox.tokens.list() */
  readonly tokens: {
    list(filter?: AccountFilter): TokenView[]
    get(id: string): TokenView | undefined
  }
  /** Everything at once, as `GET /__sandbox/state`. */
  state(): SandboxState
  /** The assumption ledger with the values in force. */
  assumptions(): Assumption[]
  /**
   * Every record, secrets included, in the versioned `--data-file` format.
   * @example await writeFile('sandbox.json', JSON.stringify(sandbox.dump()))
   */
  dump(): SandboxData
  /**
   * Replaces every record with `data` (from `dump()`); throws a `TypeError`
   * naming the first problem when `data` is not in the format, or holds what
   * no call of the API stores: a record of an account it does not hold, or
   * more customers or tokens in an account, or records in all, than
   * `limits` allows. Refused, the sandbox keeps the data it held.
   * @example await sandbox.load(JSON.parse(await readFile('sandbox.json', 'utf8')))
   */
  load(data: unknown): Promise<void>
  /**
   * Keeps the current data and clock under `name`, to come back to with `restore()`.
   * @example await sandbox.snapshot('before-checkout')
   */
  snapshot(name: string): Promise<SnapshotInfo>
  /**
   * Puts back the data and clock of a snapshot; the journal and scenarios
   * stay, the rate-limit windows start again. On a server with a store, it
   * is stored before it settles, as `POST /__sandbox/snapshots/restore`.
   * @example await sandbox.restore('before-checkout')
   */
  restore(name: string): Promise<void>
  /** The snapshots taken, oldest first. */
  snapshots(): SnapshotInfo[]
  /**
   * The whole session (options, data, clock, journal, id positions) as one
   * JSON fixture; `createSandbox({ from })` replays it.
   * @example await writeFile('session.json', JSON.stringify(sandbox.export()))
   */
  export(): SandboxSession
}

/** A snapshot, as `snapshot()` and `snapshots()` describe it. */
export interface SnapshotInfo {
  name: string
  /** When it was taken, on the sandbox clock. */
  created_at: string
  customers: number
  tokens: number
}
