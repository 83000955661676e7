// Each account's own clock, scenario queue and journal view.
import {
  createClock,
  type ClockAfterSet,
  type SandboxClock,
} from '../model/clock.ts'
import type { Journal, JournalEntry, Operation } from './journal.ts'
import { limitHint, LimitReachedError } from './limits.ts'
import {
  createScenarios,
  type Scenario,
  type ScenarioEffect,
  type ScenarioOptions,
  type TakeReceipt,
} from './scenarios.ts'

/**
 * An account's clock: the sandbox clock until it is set or advanced, then a
 * clock of the account's own that drives its tokens' expiry and the
 * `created_at` of what it creates. `reset()` makes it follow the sandbox
 * clock again.
 */
export interface AccountClock extends SandboxClock {
  /** Whether the account has a clock of its own (set or advanced since the last reset). */
  readonly own: boolean
}

/** An account's scenario queue: consumed only by requests authenticated as that account. */
export interface AccountScenarios {
  /**
   * Makes the account's next `times` calls of `operation` fail or wait as
   * asked; other accounts' calls never take it. Throws a `RangeError` as
   * `sandbox.scenarios.next()` does.
   *
   * @example
   * sandbox.account(accountId).scenarios.next('createToken', { status: 503 })
   */
  next(operation: Operation | '*', options: ScenarioOptions): Scenario
  /** The account's queued scenarios, oldest first. */
  list(): Scenario[]
  /** Empties the account's queue. */
  clear(): void
}

/**
 * One account's own controls: clock, scenario queue and journal view, so
 * that parallel tests, each with an account, never see each other's time or
 * faults. The sandbox-wide controls stay as they are.
 *
 * @example
 * const { apiKey, accountId } = await sandbox.createApiKey()
 * const account = sandbox.account(accountId)
 * account.clock.advance(3600_000) // this account's tokens only
 * account.scenarios.next('createCustomer', { status: 503 })
 * account.journal.list() // this account's requests only
 */
export interface AccountControls {
  /** The account's id. */
  readonly id: string
  readonly accountId: string
  readonly clock: AccountClock
  readonly scenarios: AccountScenarios
  /**
   * The journal's entries of requests authenticated as this account, newest
   * first. A view of the sandbox journal (bounded by `journalLimit`);
   * `clear()` hides the entries so far from this view only.
   */
  readonly journal: Journal
}

type Queue = ReturnType<typeof createScenarios>

interface AccountState {
  clock?: SandboxClock
  queue?: Queue
  /** The newest journal entry when the view was cleared: the view ends there. */
  journalMark?: JournalEntry
}

/** The per-account controls of one sandbox, and the lookups the request path uses. */
export interface AccountControlsRegistry {
  /** The controls of `accountId` (which must exist; the caller checks). */
  controls(accountId: string): AccountControls
  /**
   * The clock that applies to `accountId`: its own, or the sandbox clock.
   *
   * @example
   * const now = registry.clockFor(principal.accountId).now()
   */
  clockFor(accountId: string | null | undefined): SandboxClock
  /**
   * Takes the next effect queued for `accountId`'s calls of `operation`,
   * before the sandbox-wide queue is asked.
   */
  takeScenario(
    accountId: string,
    operation: Operation,
    receipt?: TakeReceipt,
  ): ScenarioEffect | undefined
  /** Whether `accountId`'s own queue holds a scenario for `operation`. */
  holdsScenario(accountId: string, operation: Operation): boolean
  /** Gives back a take of `accountId`'s queue (a take a fleet did not store). */
  untakeScenario(accountId: string, receipt: TakeReceipt): void
  /** The accounts with a clock of their own, for saving. */
  clocks(): { account_id: string; now: string; frozen: boolean }[]
  /** Forgets every account's controls; with `keepQueues`, the queues and journal views stay. */
  clear(options?: { keepQueues?: boolean }): void
  /** The accounts' scenario queues that hold any, for a durable store. */
  queues(): { account_id: string; queue: Scenario[] }[]
  /** Puts back queues that `queues()` gave (a restart's), in place of every queue. */
  restoreQueues(
    queues: readonly { account_id: string; queue: Scenario[] }[],
  ): void
}

/**
 * Creates the per-account controls of one sandbox. Accounts get state only
 * once a control is used, so a sandbox that never uses them pays one empty
 * `Map` lookup per request.
 *
 * @example
 * const accounts = createAccountControls({ clock, journal, afterSet: 'frozen', maxScenarios: 1000, maxScenariosPerAccount: 100 })
 * accounts.controls('acct_1').clock.advance(60_000)
 * accounts.clockFor('acct_1').now() // a minute ahead of the sandbox clock
 */
export function createAccountControls(shared: {
  clock: SandboxClock
  journal: Journal
  afterSet: ClockAfterSet
  /** `limits.scenarios`: the most queued in all accounts together. */
  maxScenarios: number
  /** `limits.scenariosPerAccount`: the most one account may queue. */
  maxScenariosPerAccount: number
  /** Hears every move of an account's clock, and an account leaving or taking its own. */
  onClockChange?: () => void
}): AccountControlsRegistry {
  const states = new Map<string, AccountState>()
  const stateOf = (accountId: string): AccountState => {
    let state = states.get(accountId)
    if (!state) {
      state = {}
      states.set(accountId, state)
    }
    return state
  }
  const queued = (): number => {
    let count = 0
    for (const state of states.values())
      count += state.queue?.list().length ?? 0
    return count
  }

  const clockOf = (accountId: string): AccountClock => ({
    now: () => (states.get(accountId)?.clock ?? shared.clock).now(),
    set(time) {
      // @note A move that throws leaves the account as it was.
      const clock =
        states.get(accountId)?.clock ??
        createClock(shared.afterSet, shared.onClockChange)
      const now = clock.set(time)
      stateOf(accountId).clock = clock
      return now
    },
    advance(ms) {
      const own = states.get(accountId)?.clock
      if (own) return own.advance(ms)
      // An account's clock starts where the sandbox clock is.
      const clock = createClock(shared.afterSet, shared.onClockChange)
      clock.set(shared.clock.now())
      const now = clock.advance(ms)
      stateOf(accountId).clock = clock
      return now
    },
    get frozen() {
      return (states.get(accountId)?.clock ?? shared.clock).frozen
    },
    get moved() {
      return (states.get(accountId)?.clock ?? shared.clock).moved
    },
    get own() {
      return states.get(accountId)?.clock !== undefined
    },
    reset() {
      const state = states.get(accountId)
      if (!state?.clock) return
      delete state.clock
      shared.onClockChange?.()
    },
  })

  const scenariosOf = (accountId: string): AccountScenarios => ({
    next(operation, options) {
      const state = stateOf(accountId)
      state.queue ??= createScenarios(false, shared.maxScenarios)
      // @note One account's share is capped below the total, so that a test
      // that queues faults in a loop cannot take every other account's room;
      // and all of them together hold limits.scenarios at most: a thousand
      // accounts cannot queue a hundred thousand.
      const own = state.queue.list().length
      if (own >= shared.maxScenariosPerAccount) {
        throw new LimitReachedError(
          'limits.scenariosPerAccount',
          `Failed to queue a scenario for the account ${accountId}: it has ${own} queued, the most that limits.scenariosPerAccount (${shared.maxScenariosPerAccount}) allows one account, so that other accounts keep room in the ${shared.maxScenarios} that limits.scenarios allows in all. ${limitHint('limits.scenariosPerAccount', "Clear the account's queue (DELETE /__sandbox/account/scenarios) or let them run")}`,
        )
      }
      const total = queued()
      if (total >= shared.maxScenarios) {
        throw new LimitReachedError(
          'limits.scenarios',
          `Failed to queue a scenario for the account ${accountId}: ${total} are queued for accounts in all, the most that limits.scenarios (${shared.maxScenarios}) allows. ${limitHint('limits.scenarios', "Clear an account's queue (DELETE /__sandbox/account/scenarios) or let them run")}`,
        )
      }
      return state.queue.next(operation, options)
    },
    list: () => states.get(accountId)?.queue?.list() ?? [],
    clear() {
      const state = states.get(accountId)
      if (state) delete state.queue
    },
  })

  const journalOf = (accountId: string): Journal => {
    const list = ({ limit }: { limit?: number } = {}): JournalEntry[] => {
      const mark = states.get(accountId)?.journalMark
      const out: JournalEntry[] = []
      const max = limit ?? Number.POSITIVE_INFINITY
      // @note Newest first: the mark, if the ring still holds it, is where
      // the view was cleared; an evicted mark means every entry is newer.
      for (const entry of shared.journal.list()) {
        if (out.length >= max || entry === mark) break
        if (entry.account_id === accountId) out.push(entry)
      }
      return out
    }
    return {
      list,
      last: () => list({ limit: 1 })[0],
      clear() {
        const newest = shared.journal.last()
        if (newest) stateOf(accountId).journalMark = newest
      },
      get size() {
        return list().length
      },
    }
  }

  return {
    controls: (accountId) => ({
      accountId,
      id: accountId,
      clock: clockOf(accountId),
      scenarios: scenariosOf(accountId),
      journal: journalOf(accountId),
    }),
    clockFor(accountId) {
      if (accountId == null || states.size === 0) return shared.clock
      return states.get(accountId)?.clock ?? shared.clock
    },
    takeScenario(accountId, operation, receipt) {
      if (states.size === 0) return undefined
      return states.get(accountId)?.queue?.take(operation, receipt)
    },
    holdsScenario(accountId, operation) {
      if (states.size === 0) return false
      return states.get(accountId)?.queue?.holds(operation) ?? false
    },
    untakeScenario(accountId, receipt) {
      const state = stateOf(accountId)
      state.queue ??= createScenarios(false, shared.maxScenarios)
      state.queue.untake(receipt)
    },
    clocks() {
      const out: { account_id: string; now: string; frozen: boolean }[] = []
      for (const [account_id, { clock }] of states) {
        if (clock)
          out.push({
            account_id,
            now: clock.now().toISOString(),
            frozen: clock.frozen,
          })
      }
      return out
    },
    queues() {
      const out: { account_id: string; queue: Scenario[] }[] = []
      for (const [account_id, { queue }] of states) {
        const list = queue?.list() ?? []
        if (list.length > 0) out.push({ account_id, queue: list })
      }
      return out
    },
    restoreQueues(queues) {
      for (const state of states.values()) delete state.queue
      for (const { account_id, queue } of queues) {
        const state = stateOf(account_id)
        state.queue ??= createScenarios(false, shared.maxScenarios)
        state.queue.restore(queue)
      }
    },
    clear({ keepQueues = false } = {}) {
      shared.onClockChange?.()
      if (!keepQueues) {
        states.clear()
        return
      }
      for (const state of states.values()) delete state.clock
    },
  }
}
