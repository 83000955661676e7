// The named snapshots of a fleet, which its store keeps (`Store.snapshots`,
// there for every store given here): loaded with a store that keeps them,
// so a page without one carries none of it.
import type { SandboxData } from '../model/schemas.ts'
import type { SharedSnapshotInfo, Store } from '../model/store.ts'
import { parseSandboxData } from '../model/seeding.ts'
import { SandboxError } from './errors.ts'
import { storageUnavailable } from './storage-errors.ts'

/**
 * Keeps `data` as the fleet's snapshot `info.name`: `false`, keeping
 * nothing, when `most` others are kept; a `503` when the store cannot take
 * it.
 *
 * @example
 * if (!(await takeSnapshot(store, info, sandbox.dump(), 10))) throw new LimitReachedError(…)
 */
export async function takeSnapshot(
  store: Store,
  info: SharedSnapshotInfo,
  data: SandboxData,
  most: number,
): Promise<boolean> {
  try {
    return await store.snapshots!.take(info, JSON.stringify(data), most)
  } catch (error) {
    throw storageUnavailable(error as Error, store)
  }
}

/**
 * The data of the fleet's snapshot `name`; a `RangeError` when there is
 * none, a `404` when what Redis keeps under its name is not a snapshot this
 * sandbox wrote (an edit by hand), a `503` when the store cannot be read.
 *
 * @example
 * await sandbox.load(await snapshotData(store, 'before-checkout'))
 */
export async function snapshotData(
  store: Store,
  name: string,
): Promise<SandboxData> {
  const text = await read(store, () => store.snapshots!.data(name))
  if (text === undefined) {
    throw new RangeError(
      `Failed to restore the snapshot "${name}": there is none by that name.`,
    )
  }
  try {
    return parseSandboxData(JSON.parse(text))
  } catch (error) {
    throw new SandboxError(
      'not_found',
      `The data kept in Redis for the snapshot "${name}" is not a snapshot this sandbox wrote (${(error as Error).message}); take it again with POST /__sandbox/snapshots.`,
    )
  }
}

/**
 * Every snapshot the fleet keeps, the first taken first; a `503` when the
 * store cannot be read.
 *
 * @example
 * const names = (await listSnapshots(store)).map((s) => s.name)
 */
export const listSnapshots = (store: Store): Promise<SharedSnapshotInfo[]> =>
  read(store, () => store.snapshots!.list())

const read = async <T>(store: Store, reading: () => Promise<T>): Promise<T> => {
  try {
    return await reading()
  } catch (error) {
    throw storageUnavailable(error as Error, store, { read: true })
  }
}
