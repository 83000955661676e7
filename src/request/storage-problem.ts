// The words of storage_unavailable, loaded when a store first fails.
import type { SandboxError } from './errors.ts'

/**
 * `storageUnavailable` (storage-errors.ts), loaded when a store first fails:
 * a page without a store carries none of its words.
 *
 * @example
 * throw await storageProblem(error, store)
 */
export const storageProblem = async (
  ...args: Parameters<typeof import('./storage-errors.ts').storageUnavailable>
): Promise<SandboxError> =>
  (await import('./storage-errors.ts')).storageUnavailable(...args)
