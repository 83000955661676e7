// The ETag of GET /__sandbox/state.
import type { SandboxClock } from '../model/clock.ts'
import type { SandboxContext } from './context.ts'

/**
 * The entity tag of `GET /__sandbox/state`, made once per sandbox: a caller
 * that sends it back in `If-None-Match` gets `304` and no body until the state
 * changes. It joins a random id of this sandbox (a restarted server never
 * repeats an old tag), `ctx.revision` (every write, clock move, reset and
 * load) and how many tokens have expired (which time changes with no write).
 * It is strong while the sandbox clock is frozen, as two answers with one tag
 * are then the same bytes, and weak (`W/`) while it runs, as their `now`
 * differs.
 *
 * @example
 * const stateTag = createStateTag(ctx)
 * new Response(JSON.stringify(sandbox.state()), { headers: { etag: stateTag() } })
 */
export function createStateTag(ctx: SandboxContext): () => string {
  const id = new Uint32Array(1)
  crypto.getRandomValues(id)
  const instance = id[0]!.toString(36)
  // The tokens' expiry times by the clock that decides them, sorted: built
  // once per revision, then counted in O(log n) per clock.
  let expiries = { revision: -1, byClock: new Map<SandboxClock, number[]>() }
  return () => {
    const { revision } = ctx
    if (expiries.revision !== revision) {
      const byClock = new Map<SandboxClock, number[]>()
      for (const token of ctx.db.tokens.all()) {
        const clock = ctx.accounts.clockFor(token.account_id)
        let times = byClock.get(clock)
        if (!times) byClock.set(clock, (times = []))
        times.push(Date.parse(token.expires_at))
      }
      for (const times of byClock.values()) times.sort((a, b) => a - b)
      expiries = { revision, byClock }
    }
    // @note As the state shows it: a token has expired once its account's
    // clock reaches `expires_at`. Within one revision a clock either stands
    // or moves with the host's time, all running ones the same way, so the
    // count alone tells which tokens have expired.
    let expired = 0
    for (const [clock, times] of expiries.byClock)
      expired += countUpTo(times, clock.now().getTime())
    const tag = `"${instance}-${revision}-${expired}"`
    return ctx.clock.frozen ? tag : `W/${tag}`
  }
}

/** How many of the sorted `times` are at most `now`. */
function countUpTo(times: readonly number[], now: number): number {
  let low = 0
  let high = times.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (times[middle]! <= now) low = middle + 1
    else high = middle
  }
  return low
}

/**
 * Whether an `If-None-Match` header names `tag`, by the weak comparison RFC
 * 9110 (section 13.1.2) asks for: `W/` aside, the opaque tags are equal; `*`
 * names any.
 *
 * @example
 * noneMatchHits('W/"a-1-0", "b-2-0"', '"b-2-0"') // true
 */
export function noneMatchHits(header: string | null, tag: string): boolean {
  if (header === null) return false
  if (header.trim() === '*') return true
  const opaque = tag.replace(/^W\//, '')
  for (const [, named] of header.matchAll(/(?:W\/)?("[^"]*")/g))
    if (named === opaque) return true
  return false
}
