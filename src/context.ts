import type { AccountControlsRegistry } from './account-controls.ts'
import type { SandboxClock } from './clock.ts'
import type { CreatedRecord, Database } from './db.ts'
import type { IdempotencyStore } from './idempotency.ts'
import type { IdGenerator, RandomSource } from './ids.ts'
import type { Journal, JournalEntry, Operation } from './journal.ts'
import type { ResolvedOptions } from './options.ts'
import type { RateLimiter } from './rate-limit.ts'
import type { ScenarioEffect, Scenarios } from './scenarios.ts'
import type {
  createCustomerBodySchema,
  createTokenBodySchema,
} from './schemas.ts'

/**
 * Where a server with a data file stores each write before it is answered.
 * In-process sandboxes have none, and pay nothing for it.
 */
export interface StorageHook {
  /**
   * Stores a record an operation created. On failure `undo` has run (the
   * record is gone from memory again) before the promise rejects.
   */
  persist(created: CreatedRecord, undo: () => void): Promise<void>
  /** Stores the whole state after a change through `/__sandbox/` (reset, keys, clock, restore). */
  persistState(): Promise<void>
  /** The error of the last write when it failed, for the health check. */
  fault(): { code: string; message: string; since: string } | undefined
}

/**
 * Everything a resolver reaches: one per sandbox, never shared. The parts a
 * reset renews (`db`, `nextId`, the stores) are read through it on every call.
 */
export interface SandboxContext {
  readonly options: ResolvedOptions
  readonly clock: SandboxClock
  readonly schemas: {
    customerBody: ReturnType<typeof createCustomerBodySchema>
    tokenBody: ReturnType<typeof createTokenBodySchema>
  }
  readonly scenarios: Scenarios & {
    take(operation: Operation): ScenarioEffect | undefined
  }
  readonly journal: Journal & { record(entry: JournalEntry): void }
  /** Per-account clocks, scenario queues and journal views. */
  readonly accounts: AccountControlsRegistry
  db: Database
  nextId: IdGenerator
  /** Draws latencies; seeded in deterministic mode. */
  random: RandomSource
  idempotency: IdempotencyStore
  rateLimiter: RateLimiter | undefined
  /** The window of the `rate-limited` persona key. */
  personaLimiter: RateLimiter
  /**
   * Builds the operations' successful answers: the platform's Response, or a
   * server adapter's lazier equal that skips building a web stream.
   */
  readonly Response: new (body: string, init: ResponseInit) => Response
  /**
   * Whether request bodies arrive from the network and must be read with a
   * running limit (the server), or were built in memory (MSW in-process).
   */
  readonly streamedBodies: boolean
  /**
   * Headers the adapter adds to every answer (the server's CORS headers).
   * The operations build them in; other answers have them set afterwards.
   */
  readonly responseHeaders:
    ((request: RequestLike) => [string, string][]) | undefined
  /** The data file of a server, when it has one: writes wait for it. */
  readonly storage?: StorageHook | undefined
  /** Settles when the current seeding is done; every resolver awaits it. */
  ready: Promise<void>
  /** Whether `ready` has settled, so that resolvers need not wait a tick for it. */
  seeded: boolean
}

/**
 * What the operations read of a request. A web `Request` has all of it; the
 * server builds just this from node:http for the operations' paths, so that
 * no `Request`, `Headers` or `URL` is made per call. Header names are asked
 * for in lower case.
 */
export interface RequestLike {
  readonly method: string
  readonly headers: {
    get(name: string): string | null
    has(name: string): boolean
  }
  readonly body: ReadableStream<Uint8Array> | null
  arrayBuffer(): Promise<ArrayBuffer>
}

/** A request resolver: a `Request` in, a `Response` out, no MSW involved. */
export type Resolver = (request: Request, url: URL) => Promise<Response>

/** One entry of the route table that the MSW handlers and the server share. */
export interface Route {
  method: 'GET' | 'POST' | 'DELETE'
  /** The path after the base, e.g. `/v1/customers` or `/__sandbox/state`. */
  path: string
  resolve: Resolver
}

/**
 * An operation of the API in the route table: it reads only what
 * `RequestLike` has, and the request's path, unparsed.
 */
export interface OperationRoute {
  method: 'POST'
  /** The path after the base, e.g. `/v1/customers`. */
  path: string
  /** Answers `request`, whose path (with the base) the journal records. */
  resolve: (request: RequestLike, path: string) => Promise<Response>
}
