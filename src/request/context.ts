// The context every resolver reaches, and the shapes of a route and a request's state.
import type { AccountControlsRegistry } from './account-controls.ts'
import type { SandboxClock } from '../model/clock.ts'
import type { Database } from '../model/db.ts'
import type { StateWatch, Store } from '../model/store.ts'
import type { IdempotencyStore } from './idempotency.ts'
import type { IdGenerator, RandomSource } from '../model/ids.ts'
import type { BearerResult } from './auth.ts'
import type { Journal, JournalEntry, Operation } from './journal.ts'
import type { ResolvedOptions } from '../options.ts'
import type { RateLimiter } from './rate-limit.ts'
import type {
  Scenario,
  ScenarioEffect,
  Scenarios,
  TakeReceipt,
} from './scenarios.ts'
import type { z } from 'zod'

/**
 * Everything a resolver reaches: one per sandbox, never shared. The parts a
 * reset renews (`db`, `nextId`, the stores) are read through it on every call.
 */
export interface SandboxContext {
  readonly options: ResolvedOptions
  readonly clock: SandboxClock
  /** Each operation's request body schema, built from the options. */
  readonly schemas: OperationSchemas
  readonly scenarios: Scenarios & {
    take(
      operation: Operation,
      receipt?: TakeReceipt,
    ): ScenarioEffect | undefined
    untake(receipt: TakeReceipt): void
    holds(operation: Operation): boolean
    restore(queue: readonly Scenario[]): void
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
   * The durable store of a server (its data file, Redis), when it has one:
   * writes wait for it. Attached once it is open, before any request.
   */
  storage?: Store | undefined
  /**
   * The admin change under way on a store that cannot put back what it
   * holds (the data file): the next one waits for it to be stored or taken
   * back, so that no change is decided on one that is then undone.
   */
  adminTurn?: Promise<unknown> | undefined
  /**
   * The take of a queued scenario under way in a replica of a fleet, or the
   * change of the sandbox's own API being stored: one at a time, so that a
   * change, which stores the scenarios whole, holds every take this replica
   * stored before it (a take is applied here once stored).
   */
  scenarioTurn?: Promise<unknown> | undefined
  /**
   * The writes of API calls that the durable store has not answered yet:
   * their records are in memory, and go again if the store refuses them.
   */
  writesUnderWay?: Set<Promise<unknown>>
  /** Settles when the current seeding is done; every resolver awaits it. */
  ready: Promise<void>
  /** Whether `ready` has settled, so that resolvers need not wait a tick for it. */
  seeded: boolean
  /**
   * Counts the changes to what `GET /__sandbox/state` shows: every write to
   * the data, every move of a clock, every reset and load. Its `ETag` is
   * built on it.
   */
  readonly revision: number
  /**
   * Marks the state now; what it returns tells what changed since
   * (`StateChange`), for a call of the sandbox's own API to store only that,
   * and takes a small change back when it could not be stored.
   */
  watchState(): Promise<StateWatch>
}

/**
 * The state of one request while it is answered: its id, when it began, what
 * the journal will say of it and the headers its answer carries (the request
 * id, rate limiting). The core's `fetch` makes it; routes fill it in.
 */
export interface RequestState {
  readonly requestId: string
  readonly started: number
  /**
   * The data the request began on: a reset, load or restore while it is
   * answered renews `ctx.db`, and the request is then dropped unanswered.
   */
  readonly db: Database
  /** When it began, on the clock of the caller's account once known. */
  at: Date
  /** The `Authorization` header as read, before any lookup. */
  readonly bearer: BearerResult
  entry: Pick<
    JournalEntry,
    'account_id' | 'credential' | 'scenario' | 'replayed' | 'code'
  >
  /**
   * Headers the answer carries besides its own, as name-value pairs; the
   * first is `x-request-id`.
   */
  headers: [string, string][]
  /**
   * The answer built with `headers` already in it (see `respond`), which the
   * core's `fetch` then leaves as it is.
   */
  answer?: Response
}

/**
 * Runs `work` once the work before it on the same turn of `ctx` (one of
 * its `adminTurn`, `scenarioTurn`) is done, failed or not: one at a time.
 *
 * @example
 * await inTurn(ctx, 'scenarioTurn', () => takeAndStore(ctx, operation))
 */
export function inTurn<T>(
  ctx: SandboxContext,
  turn: 'adminTurn' | 'scenarioTurn',
  work: () => Promise<T>,
): Promise<T> {
  const done = (ctx[turn] ?? Promise.resolve()).then(work)
  ctx[turn] = done.catch(() => {})
  return done
}

/** What a route's resolver gets. */
export interface RouteCall {
  request: Request
  /** The request's path after the base, e.g. `/v1/customers`. */
  path: string
  /** The values of the route's `:name` path parameters. */
  params: Record<string, string>
  /** The request's URL, parsed on first use. */
  readonly url: URL
  state: RequestState
}

/**
 * One entry of the route table: the MSW patterns, the OpenAPI paths, the
 * operation names and the `Allow` header of a 405 all come from these.
 */
export interface Route {
  /** HEAD and OPTIONS the router answers for every path. */
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /**
   * The path after the base, e.g. `/v1/customers` or `/__sandbox/state`; a
   * `:name` segment is a path parameter.
   */
  path: string
  /**
   * The operation of the API this route answers, for the journal and for
   * scenarios; routes of the sandbox's own surface have none.
   */
  operation?: Operation
  resolve(call: RouteCall): Promise<Response>
}

/**
 * The request body schema of each operation that takes a body, by name,
 * built once per sandbox.
 */
export type OperationSchemas = { readonly [name: string]: z.ZodType }
