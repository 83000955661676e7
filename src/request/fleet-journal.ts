// The journal of a fleet, which its store keeps (`Store.journal`): loaded
// with a store that keeps one, so a page without one carries none of it.
import type { JournalEntry } from '../model/journal-entry.ts'
import type { Store } from '../model/store.ts'
import { storageUnavailable } from './storage-errors.ts'

/**
 * The fleet's journal, newest first (all of it, or one account's view); a
 * `503` when the store cannot be read.
 *
 * @example
 * const requests = await listFleetJournal(store, { limit: 20 })
 */
export async function listFleetJournal(
  store: Store,
  options: { limit?: number; accountId?: string },
): Promise<JournalEntry[]> {
  try {
    return await store.journal!.list(options)
  } catch (error) {
    throw storageUnavailable(error as Error, store, { read: true })
  }
}

/**
 * Empties the fleet's journal, or hides its entries so far from one
 * account's view; a `503` when the store cannot take it.
 *
 * @example
 * await clearFleetJournal(store, account.id)
 */
export async function clearFleetJournal(
  store: Store,
  accountId?: string,
): Promise<void> {
  try {
    await store.journal!.clear(accountId)
  } catch (error) {
    // @note Where it may have been cleared, the 503 says to read it back.
    throw storageUnavailable(error as Error, store, { admin: true })
  }
}
