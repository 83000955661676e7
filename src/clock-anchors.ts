// A running clock as a durable store keeps it: its time with the host's time
// when it had it, so that a restart (after kill -9 too) or another replica
// reads it where it would be had it never stopped, never behind a time it
// gave a record. Loaded with a store only: a page that keeps nothing never
// loads it.
import { z } from 'zod'
import { MAX_CLOCK_MS } from './model/clock.ts'
import type { StateParts, StoredClock } from './model/store.ts'
import type { SandboxContext } from './request/context.ts'

/** The clocks of saved data, as a durable store keeps them. */
export type StoredClocks = Pick<StateParts, 'clock' | 'account_clocks'>

/**
 * The saved clocks `parts` holds, each running one (set or advanced under
 * `clockAfterSet: 'running'`) read again beside the host's time, which it
 * keeps as `host_now`; a frozen clock, and a sandbox clock that follows the
 * host's time, stay as they are. Only the parts given are returned.
 *
 * @example
 * anchorClocks(ctx, dumpWithoutRecords())
 * // { clock: { now: '2030-01-01T00:00:05.000Z', frozen: false, moved: true, host_now: '2026-05-01T09:00:05.000Z' } }
 */
export function anchorClocks(
  ctx: SandboxContext,
  { clock, account_clocks }: StoredClocks,
): StoredClocks {
  // @note The host's time first, then each clock: a running clock read
  // after it is not behind it, so one run on from the pair never goes back.
  const host_now = new Date().toISOString()
  const anchored: StoredClocks = {}
  if (clock) {
    anchored.clock =
      clock.frozen || !clock.moved
        ? clock
        : { ...clock, now: ctx.clock.now().toISOString(), host_now }
  }
  if (account_clocks) {
    anchored.account_clocks = account_clocks.map((saved) =>
      saved.frozen
        ? saved
        : {
            ...saved,
            now: ctx.accounts.clockFor(saved.account_id).now().toISOString(),
            host_now,
          },
    )
  }
  return anchored
}

/**
 * Where a saved clock is now, in epoch ms: a running one with `host_now`
 * has run on by the host's time since (not at all when the host's time is
 * behind it: another host's clock, a step back of NTP), up to the end of
 * the clock's range; any other is at its saved `now`.
 *
 * @example
 * // saved 5 s ago by the host's time
 * anchoredTime({ now: '2030-01-01T00:00:00.000Z', frozen: false, host_now }) // 2030-01-01T00:00:05 in ms
 */
export function anchoredTime(
  saved: StoredClock<{ now: string; frozen: boolean }>,
): number {
  const at = Date.parse(saved.now)
  if (saved.frozen || saved.host_now === undefined) return at
  const since = Math.max(0, Date.now() - Date.parse(saved.host_now))
  return Math.min(at + since, MAX_CLOCK_MS)
}

const HostNow = z.object({ host_now: z.iso.datetime().optional() })
const StoredClocksSchema = z.object({
  clock: HostNow.optional(),
  account_clocks: z.array(HostNow).optional(),
})

/**
 * Refuses saved data whose `host_now` is not an ISO 8601 date-time, with a
 * `TypeError` naming its JSON path, as a load names any other field: before
 * the data is loaded, so that nothing is replaced.
 *
 * @example
 * checkStoredClocks({ clock: { host_now: 'soon' } }) // TypeError: Failed to load sandbox data: clock.host_now: Invalid ISO datetime.
 */
export function checkStoredClocks(input: unknown): void {
  const result = StoredClocksSchema.safeParse(input)
  if (result.success) return
  const issue = result.error.issues[0]!
  // @note What is not an object there is the load's to name.
  if (issue.path.at(-1) !== 'host_now') return
  throw new TypeError(
    `Failed to load sandbox data: ${issue.path.join('.')}: ${issue.message}.`,
  )
}

/**
 * Runs on the running clocks of saved data that a durable store wrote, once
 * the data is loaded (which put them at their saved `now`): each by the
 * host's time since its `host_now` (`anchoredTime`). Saved data without it
 * leaves them where the load put them.
 *
 * @example
 * await loadOwn(data)
 * runOnStoredClocks(ctx, data)
 */
export function runOnStoredClocks(
  ctx: SandboxContext,
  { clock, account_clocks }: StoredClocks,
): void {
  if (clock?.host_now !== undefined && clock.moved && !clock.frozen)
    ctx.clock.set(anchoredTime(clock))
  for (const saved of account_clocks ?? []) {
    if (saved.host_now !== undefined && !saved.frozen)
      ctx.accounts.controls(saved.account_id).clock.set(anchoredTime(saved))
  }
}
