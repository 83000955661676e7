// What a call of the sandbox's own API changed, for a durable store to keep
// only that; and how a replica applies the clocks another one stored.
import { anchorClocks, anchoredTime } from './clock-anchors.ts'
import type { SandboxContext } from './request/context.ts'
import type { SandboxData, SavedScenarios } from './model/schemas.ts'
import type {
  StateChange,
  StateParts,
  StateWatch,
  StoreWrite,
} from './model/store.ts'

/**
 * Puts clocks that another replica stored in place of this copy's: a clock
 * saved frozen or moved is set (a running one where it is now, by the
 * host's time since it was stored: `anchoredTime`), one that follows the
 * host's time again is reset; an account missing from `account_clocks` has
 * no clock of its own.
 */
export function applyClocks(
  ctx: SandboxContext,
  { clock, account_clocks }: StateParts,
): void {
  if (clock?.frozen || clock?.moved) ctx.clock.set(anchoredTime(clock))
  else if (clock) ctx.clock.reset()
  if (account_clocks) {
    const kept = new Set(account_clocks.map((saved) => saved.account_id))
    for (const { account_id } of ctx.accounts.clocks())
      if (!kept.has(account_id)) ctx.accounts.controls(account_id).clock.reset()
    for (const saved of account_clocks)
      ctx.accounts.controls(saved.account_id).clock.set(anchoredTime(saved))
  }
}

/**
 * Marks the parts of the state a call of the sandbox's own API may change,
 * and returns what tells what it changed once the call is done. Records
 * are told by the database's own counters (a new database, an edit, the
 * accounts and API keys added at the end of their collections); the clocks
 * by their moves; the scenarios, which stay small, by their JSON. A call
 * that ran beside `createApiKey` stores its account and key too, which the
 * stores keep once: each call's answer then waits for a write that holds
 * them.
 *
 * @example
 * const watch = watchState(ctx, reads)
 * await resolve(call)
 * const change = watch.changed() // undefined, 'whole', 'replaced', 'restored', or a StoreWrite
 */
export function watchState(
  ctx: SandboxContext,
  read: {
    clockMoves: () => number
    clocks: () => Pick<SandboxData, 'clock' | 'account_clocks'>
    scenarios: () => SavedScenarios
    restoreScenarios: (saved: SavedScenarios) => void
  },
): StateWatch {
  const { db } = ctx
  const edits = db.edits()
  const accounts = db.accounts.count()
  const apiKeys = db.apiKeys.count()
  const clockMoves = read.clockMoves()
  const scenariosBefore = read.scenarios()
  const scenarios = JSON.stringify(scenariosBefore)
  // Small whatever the data holds: taken so that a change can be undone
  // (a running clock put back where it would be had it not moved).
  const { clock: clockBefore, account_clocks: accountClocksBefore = [] } =
    anchorClocks(ctx, read.clocks())
  const changed = (): StateChange => {
    // @note A restore keeps the scenarios (a reset with none queued too,
    // told apart from it by nothing): a state that holds them as this copy
    // held them owes them to the log before it.
    if (ctx.db !== db)
      return JSON.stringify(read.scenarios()) === scenarios
        ? 'restored'
        : 'replaced'
    if (db.edits() !== edits) return 'whole'
    const newAccounts = db.accounts.all().slice(accounts)
    const newKeys = db.apiKeys.all().slice(apiKeys)
    // One account with its key is one line; more is a whole state.
    if (newAccounts.length > 1 || newKeys.length > 1) return 'whole'
    const write: StoreWrite = {}
    const [account] = newAccounts
    const [apiKey] = newKeys
    if (account || apiKey) {
      write.added = {
        ...(account && { account: { ...account } }),
        ...(apiKey && { api_key: { ...apiKey } }),
      }
    }
    const set: StateParts = {}
    if (read.clockMoves() !== clockMoves) {
      // A running clock with the host's time: stored, it runs on from there.
      const { clock, account_clocks = [] } = read.clocks()
      Object.assign(set, anchorClocks(ctx, { clock, account_clocks }))
    }
    const scenariosNow = read.scenarios()
    if (JSON.stringify(scenariosNow) !== scenarios) set.scenarios = scenariosNow
    if (Object.keys(set).length > 0) write.set = set
    return Object.keys(write).length > 0 ? write : undefined
  }
  return {
    changed,
    undo({ added, set }) {
      // @note In the reverse order of the call: the key, then its account
      // (which takes its clock and queue with it), then the parts it set.
      if (added?.api_key) {
        const { id } = added.api_key
        ctx.db.apiKeys.delete((q) => q.where((record) => record.id === id))
      }
      if (added?.account) {
        const { id } = added.account
        ctx.db.accounts.delete((q) => q.where((record) => record.id === id))
      }
      if (set?.clock || set?.account_clocks)
        applyClocks(ctx, {
          clock: clockBefore,
          account_clocks: accountClocksBefore,
        })
      if (set?.scenarios) read.restoreScenarios(scenariosBefore)
    },
  }
}
