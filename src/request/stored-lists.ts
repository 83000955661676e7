// The reads of `storedOnly` (stored-records.ts) with a durable store: loaded with the first.
import type { SandboxContext } from './context.ts'

/** The record lists that API calls create, as any read gives them: by id. */
export interface CreatedLists {
  customers: readonly { id: string; account_id: string }[]
  tokens: readonly { id: string; account_id: string }[]
  /** A state's accounts, which count their records (`customer_count`). */
  accounts?: readonly ({ id: string } | CountedAccount)[]
}

interface CountedAccount {
  id: string
  customer_count: number
  token_count: number
}

/**
 * `storedOnly` with a durable store: `lists` once the writes under way of
 * the records they hold are settled, without those taken back.
 *
 * @example
 * const data = await storedLists(ctx, sandbox.dump())
 */
export async function storedLists<T extends CreatedLists>(
  ctx: SandboxContext,
  lists: T,
): Promise<T> {
  // A reset meanwhile renews ctx.db; a write takes its record back from its own.
  const { db } = ctx
  // @note A call's record is in memory a few microtasks before its write
  // is under way: a macrotask later, the write of each one read is.
  await new Promise((resolve) => setTimeout(resolve, 0))
  await Promise.allSettled(ctx.writesUnderWay ?? [])
  const customers = lists.customers.filter((r) => db.customerById(r.id))
  const tokens = lists.tokens.filter((r) => db.tokenById(r.id))
  // @note A state's accounts count their records as listed, whether or not
  // one was taken back: an account counts a record from the moment its
  // create (its own, or another replica's being applied) checks it in,
  // before the list holds it, and a read in between counted a customer it
  // did not list.
  const customerCounts = countBy(customers)
  const tokenCounts = countBy(tokens)
  const accounts = lists.accounts?.map((account) =>
    'customer_count' in account
      ? {
          ...account,
          customer_count: customerCounts.get(account.id) ?? 0,
          token_count: tokenCounts.get(account.id) ?? 0,
        }
      : account,
  )
  return { ...lists, customers, tokens, ...(accounts && { accounts }) }
}

/** How many of `records` each account holds. */
function countBy(
  records: readonly { account_id: string }[],
): Map<string, number> {
  const counts = new Map<string, number>()
  for (const { account_id } of records)
    counts.set(account_id, (counts.get(account_id) ?? 0) + 1)
  return counts
}
