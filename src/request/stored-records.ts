// Reads of the records that a durable store holds, not those it may still refuse.
import type { SandboxContext } from './context.ts'
import type { CreatedLists } from './stored-lists.ts'

/**
 * `lists`, read from memory now, without the records whose writes the
 * durable store then refused: a record is in memory while its write is
 * under way, and a write that another replica outran, or that the store
 * could not take (a full disk), is taken back (and made again under
 * another id). A read that showed it would show a record no call was
 * answered 201 for, which then vanishes. A state's accounts count the
 * records as listed. Without a durable store, `lists` as they are, with no
 * wait (and the reading code stays out of a page that has none).
 *
 * @example
 * const data = await storedOnly(ctx, sandbox.dump())
 * @see commit() in pipeline.ts, which keeps `ctx.writesUnderWay`
 */
export async function storedOnly<T extends CreatedLists>(
  ctx: SandboxContext,
  lists: T,
): Promise<T> {
  if (!ctx.storage) return lists
  return (await import('./stored-lists.ts')).storedLists(ctx, lists)
}
