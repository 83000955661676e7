// The shape of one entry of the request journal, which stores keep and the
// options' onRequest hears.
import type { Operation } from './operations.ts'

/** One request the sandbox answered, as the journal keeps it. */
export interface JournalEntry {
  request_id: string
  /** The operation the path names, or null for a 404/405 under the API's paths. */
  operation: Operation | null
  method: string
  path: string
  status: number
  /** The error code, for answers that are errors. */
  code: string | null
  account_id: string | null
  /** The credential in masked form (`sk_test_…0001`), or null when none was sent. */
  credential: string | null
  /** Wall-clock time the sandbox took to answer, in milliseconds. */
  duration_ms: number
  /** When it arrived, on the sandbox clock. */
  at: string
  /** What a scenario injected into this request, if anything. */
  scenario: string | null
  /** Whether the answer was an idempotent replay. */
  replayed: boolean
}
