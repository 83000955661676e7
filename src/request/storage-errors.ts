// The problem of a request that a durable store could not serve, in the
// store's own words, or that a reset overtook on a replica of a fleet:
// loaded when first needed (`storageProblem`, `overtaken`).
import type { Store } from '../model/store.ts'
import { SandboxError, STORAGE_RETRY_AFTER_SECONDS } from './errors.ts'
import { LimitReachedError, limitReached } from './limits.ts'

/**
 * The problem for a request the durable store could not serve, in the
 * store's own words (`Store.outage`): a write it could not take (nothing
 * changed), a change it keeps in memory though it could not store it
 * (`kept`, a reset on the data file), or a read it could not bring up to
 * date (`read`, a shared store that did not answer); `admin` for a change
 * of the sandbox's own API, which no Idempotency-Key replays.
 *
 * @example
 * throw storageUnavailable(Object.assign(new Error('no space'), { code: 'ENOSPC' }), store)
 * throw storageUnavailable(error, store, { read: true }) // could not read its Redis store …
 */
export function storageUnavailable(
  error: Error,
  store: Pick<Store, 'outage'>,
  {
    kept = false,
    read = false,
    admin = false,
  }: { kept?: boolean; read?: boolean; admin?: boolean } = {},
): SandboxError {
  // @note A limit the store counts across a fleet is a refusal, as the
  // sandbox's own are: nothing to wait for.
  if (error instanceof LimitReachedError) return limitReached(error)
  const { where, code, kept: keptWords, reads, untilFixed } = store.outage
  const shown = (error as { code?: string }).code ?? code
  // A fault that waiting never ends says what ends it instead.
  const fixed = untilFixed?.[shown]
  const until = fixed ?? store.outage.until
  const health = 'GET /__sandbox/health shows the storage error.'
  const headers = { 'retry-after': String(STORAGE_RETRY_AFTER_SECONDS) }
  if (read) {
    return new SandboxError(
      'storage_unavailable',
      `The sandbox could not read ${reads?.from ?? 'its store'} (${shown}) to answer from current state; retry once ${fixed ?? reads?.until ?? until}; ${health}`,
      { headers },
    )
  }
  // @note Said only by a store that keeps such a change (the data file);
  // one that puts back what it holds (Redis) changed nothing.
  if (kept && keptWords) {
    return new SandboxError(
      'storage_unavailable',
      `The sandbox could not store this change ${where} (${shown}): ${keptWords}; do not send it again. ${health}`,
      { headers },
    )
  }
  // @note A write sent and never answered may yet be stored: saying that
  // nothing changed would make a retry without its key a duplicate.
  const unsettled = (error as { unsettled?: boolean }).unsettled
  const outcome =
    unsettled && admin
      ? `, so it may or may not be stored: once ${until}, read it back (GET on the same path, or GET /__sandbox/state) before you send it again`
      : unsettled
        ? `, so it may or may not be stored: retry it with the same Idempotency-Key, which replays it if it was, once ${until}`
        : `, so nothing was changed. Retry once ${until}`
  return new SandboxError(
    'storage_unavailable',
    `The sandbox could not store this write ${where} (${shown})${outcome}; ${health}`,
    { headers },
  )
}

/**
 * The `503` of a request that a reset or a restore overtook on a replica
 * of a fleet (`overtaken` in pipeline.ts, which loads it): nothing was
 * changed, and a retry is answered from the new data.
 *
 * @example
 * throw overtakenProblem(true) // Another replica stored a whole new state …
 */
export function overtakenProblem(byAnotherReplica: boolean): SandboxError {
  return new SandboxError(
    'storage_unavailable',
    byAnotherReplica
      ? 'Another replica stored a whole new state (a reset, a restore, the state after many changes, or the log begun again after Redis lost it) while this request was answered, so it was not stored and nothing was changed. Retry it.'
      : 'This replica stored a whole new state (a reset or a restored snapshot) while this request was answered, so it was not stored and nothing was changed. Retry it.',
    { headers: { 'retry-after': '1' } },
  )
}
