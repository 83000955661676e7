// The sandbox without MSW: its parts wired into one context and one fetch.
import {
  createOperationSchemas,
  OPERATIONS,
  SURFACE_ROUTES,
} from '../handlers/index.ts'
import { surfaceRoutes } from '../handlers/sandbox.ts'
import { createAccountControls } from './request/account-controls.ts'
import { createClock } from './model/clock.ts'
import type { SandboxContext } from './request/context.ts'
import type { OperationDefinition } from './request/define-operation.ts'
import type { Store } from './model/store.ts'
import type { SavedScenarios } from './model/schemas.ts'
import type { DurableState } from './durable-state.ts'
import { createDatabase, type Database } from './model/db.ts'
import { createIdempotencyStore } from './request/idempotency.ts'
import {
  createIdGenerator,
  createCryptoRandom,
  createSeededRandom,
  type IdKind,
} from './model/ids.ts'
import { createJournal, type JournalEntry } from './request/journal.ts'
import {
  resolveOptions,
  type ResolvedOptions,
  type SandboxOptions,
} from './options.ts'
import { createRateLimiter } from './request/rate-limit.ts'
import { PERSONA_RATE_LIMIT } from './model/personas.ts'
import { operationRoute } from './request/pipeline.ts'
import { storageProblem } from './request/storage-problem.ts'
import { storeReplacement } from './request/sandbox-api.ts'
import { createRouter, type Router } from './request/router.ts'
import type { SandboxCore } from './sandbox.ts'
import {
  createJavaScriptApi,
  restoreSavedClocks,
  type DataReplacement,
} from './javascript-api.ts'
import { createScenarios } from './request/scenarios.ts'
import {
  insertSavedData,
  checkSessionRules,
  parseSession,
  seedDefaultData,
} from './model/seeding.ts'

/** What a host gives the core besides options. */
export interface SandboxAdapter {
  /**
   * The operations of the route table: the API's own (`OPERATIONS`) unless
   * a test gives others, which are then routed, validated and journaled
   * like them.
   */
  operations?: readonly OperationDefinition<string>[]
}

/**
 * The parts of the context that replacing the data renews: the database,
 * the id streams, the latency draws and the stores kept per request
 * (idempotency keys, rate-limit windows).
 */
type DataParts = Pick<
  SandboxContext,
  'db' | 'nextId' | 'random' | 'idempotency' | 'rateLimiter' | 'personaLimiter'
>

/**
 * The sandbox without MSW: its data, clock, journal, scenarios and route
 * table, answering through one `fetch`. `createSandbox()` binds it to MSW
 * handlers; the standalone server serves the same `fetch` through srvx, so
 * it never loads MSW. This wires the parts together; the JavaScript API is
 * `createJavaScriptApi()` (`javascript-api.ts`), the data it starts with comes
 * from `model/seeding.ts`.
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
  /**
   * Gives the sandbox its durable store, opened after the core because the
   * store loads into it (`durable`): from then on each write is stored
   * before it is answered. Called once, before the first request.
   */
  attach(store: Store): void
  /**
   * Takes saved data as `load()` does, but keeps the journal and the queued
   * scenarios: for data that another copy of the same sandbox saved (a
   * browser tab's), which replaces the records and not this copy's log.
   */
  adopt(input: unknown): Promise<void>
  /**
   * What a durable store keeps and puts back beside the data (see
   * `DurableState`), loaded with the store: a sandbox that keeps nothing
   * never loads it.
   */
  durable(): Promise<DurableState>
} {
  const { from, ...explicit } = options
  const { operations = OPERATIONS } = adapter
  const session = from === undefined ? undefined : parseSession(from)
  // A session's options are the base; the ones passed beside it win.
  const resolved = resolveOptions(
    session
      ? { ...(session.options as SandboxOptions), ...explicit }
      : explicit,
  )
  if (session) checkSessionRules(session, resolved)
  const seed = session?.data.seed ?? resolved.seed
  let revision = 0
  const changed = (): void => {
    revision++
  }
  // Moves of the sandbox's and the accounts' clocks, which a running clock's
  // time alone cannot tell (it changes by itself).
  let clockMoves = 0
  // @note Loaded with the first change a store keeps: a page that keeps
  // nothing never loads it.
  let stateWatch: Promise<typeof import('./state-watch.ts')> | undefined
  const loadStateWatch = () => (stateWatch ??= import('./state-watch.ts'))
  const clockMoved = (): void => {
    clockMoves++
    changed()
  }
  const clock = createClock(resolved.clockAfterSet, clockMoved)
  const journal = createJournal(resolved.journalLimit)

  // Fills a database with the default data of a seed, created at the clock's time.
  const defaultDataOf =
    (dataSeed: number) =>
    (db: Database): Promise<void> =>
      seedDefaultData(db, {
        seed: dataSeed,
        options: resolved,
        now: clock.now(),
      })

  // Fills `db` and marks the context settled, unless the data was replaced
  // again meanwhile. @note The callback runs after `ctx` below exists.
  const fillAndSettle = (
    db: Database,
    fill: (db: Database) => Promise<void>,
  ): Promise<void> =>
    fill(db).then(() => {
      if (ctx.db === db) ctx.seeded = true
    })

  const dataParts = createDataParts(resolved, seed, changed, session?.id_draws)
  const ctx: SandboxContext = {
    options: resolved,
    clock,
    schemas: createOperationSchemas(resolved, operations),
    scenarios: createScenarios(resolved.latency, resolved.limits.scenarios),
    journal,
    accounts: createAccountControls({
      clock,
      journal,
      afterSet: resolved.clockAfterSet,
      maxScenarios: resolved.limits.scenarios,
      maxScenariosPerAccount: resolved.limits.scenariosPerAccount,
      onClockChange: clockMoved,
    }),
    ...dataParts,
    seeded: false,
    get revision() {
      return revision
    },
    ready: fillAndSettle(
      dataParts.db,
      session ? (db) => insertSavedData(db, session.data) : defaultDataOf(seed),
    ),
    watchState: async () =>
      (await loadStateWatch()).watchState(ctx, stateReads),
  }

  const replaceData = ({
    seed: nextSeed,
    fill = defaultDataOf(nextSeed),
    skipIds,
    keepJournal = false,
    fromStore = false,
  }: DataReplacement): Promise<void> => {
    Object.assign(ctx, createDataParts(resolved, nextSeed, changed, skipIds))
    changed()
    if (!keepJournal) {
      ctx.journal.clear()
      ctx.scenarios.clear()
    }
    ctx.clock.reset()
    ctx.accounts.clear({ keepQueues: keepJournal })
    ctx.seeded = false
    ctx.ready = fillAndSettle(ctx.db, fill)
    const store = ctx.storage
    if (!store || fromStore) return ctx.ready
    return Promise.all([ctx.ready, forgetFleetCounts(store, keepJournal)]).then(
      () => {},
    )
  }

  const {
    sandbox,
    adopt,
    loadOwn,
    exportWithoutRecords,
    dumpWithoutRecords,
    unstored,
  } = createJavaScriptApi(ctx, {
    seed,
    fetch: (request) => router.fetch(request),
    replaceData,
    stored: (change) => storeReplacement(ctx, change),
  })
  const router = createRouter(ctx, [
    ...operations.map((spec) => operationRoute(ctx, spec)),
    ...surfaceRoutes(ctx, sandbox, {
      routes: SURFACE_ROUTES,
      operations,
      exportWithoutRecords,
      unstored,
    }),
  ])
  const stateReads = {
    clockMoves: () => clockMoves,
    clocks: dumpWithoutRecords,
    scenarios: () => savedScenarios(ctx),
    restoreScenarios: (saved: SavedScenarios) => {
      ctx.scenarios.latency(saved.latency)
      ctx.scenarios.restore(saved.queue)
      ctx.accounts.restoreQueues(saved.accounts)
    },
  }
  let durable: Promise<DurableState> | undefined
  if (session) {
    for (const entry of session.journal.toReversed())
      ctx.journal.record(entry as unknown as JournalEntry)
    restoreSavedClocks(ctx, session.data)
  }
  return {
    sandbox,
    router,
    adopt,
    durable: () =>
      (durable ??= import('./durable-state.ts').then((module) =>
        module.createDurableState(ctx, sandbox, {
          adopt,
          loadOwn,
          loadStateWatch,
          savedScenarios: () => savedScenarios(ctx),
          dumpWithoutRecords,
        }),
      )),
    attach(store) {
      ctx.storage = store
    },
  }
}

/**
 * Forgets what a fleet keeps beside its state, as replacing the data
 * forgets this copy's: the rate-limit counts, and the journal unless
 * `keepJournal` (a restore). A reset through `/__sandbox/reset` and through
 * `sandbox.reset()` both come here.
 */
async function forgetFleetCounts(
  store: Store,
  keepJournal: boolean,
): Promise<void> {
  // @note A store that fails here is a 503 like a failed write, not a bug.
  try {
    if (!keepJournal) await store.journal?.clear(undefined, { reset: true })
    await store.forgetHits?.()
  } catch (error) {
    throw await storageProblem(error as Error, store)
  }
}

/** The scenario queues and the latency, as a durable store keeps them. */
const savedScenarios = (ctx: SandboxContext): SavedScenarios => ({
  latency: ctx.scenarios.latency(),
  queue: ctx.scenarios.list(),
  accounts: ctx.accounts.queues(),
})

/**
 * New data parts for `seed`: an empty database whose writes `onWrite` hears,
 * id streams (past `skipIds` draws), latency draws (seeded in deterministic
 * mode) and empty request stores.
 */
function createDataParts(
  options: ResolvedOptions,
  seed: number,
  onWrite: () => void,
  skipIds?: Partial<Record<IdKind, number>>,
): DataParts {
  const { deterministic, idempotency, rateLimit } = options
  return {
    db: createDatabase({ indexEmails: options.uniqueEmail, onWrite }),
    nextId: createIdGenerator({
      seed,
      deterministic,
      ...(skipIds && { skip: skipIds }),
    }),
    random: deterministic
      ? createSeededRandom(seed, 'latency')
      : createCryptoRandom(),
    idempotency: createIdempotencyStore({
      ttlMs: idempotency.ttlSeconds * 1000,
      maxEntries: idempotency.maxEntries,
      maxEntriesPerAccount: idempotency.maxEntriesPerAccount,
    }),
    rateLimiter: rateLimit ? createRateLimiter(rateLimit) : undefined,
    personaLimiter: createRateLimiter(PERSONA_RATE_LIMIT),
  }
}
