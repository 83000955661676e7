// The browser's persistence: the memory store saved to localStorage, loaded only by a page that persists.
import type { SandboxCore } from '../sandbox.ts'
import type { createSandboxCore } from '../sandbox-core.ts'
import type { DurableState } from '../durable-state.ts'
import type { Store } from '../model/store.ts'
import type { SandboxData } from '../model/schemas.ts'

const STORAGE_VERSION = 1
const PREFIX = '[customer-token-sandbox]'

/** A sandbox kept in localStorage: what `persist` turns on. */
export interface Persistence {
  /** Whether the data and clock came from localStorage. */
  restored: boolean
  /** Writes the sandbox to localStorage now, unless stopped. */
  save(): void
  /**
   * Saves when the page is hidden, and takes in what another tab of this
   * origin saves, so that its records are not overwritten by this tab's
   * next save: once `idle()` settles, as taking it replaces the data that a
   * request in flight writes to.
   */
  listen(idle: () => Promise<void>): void
  /** Saves no more and stops listening (the worker stopped). */
  stop(): void
}

/**
 * Keeps a started core in `localStorage[key]`: loads what it holds, then
 * stores every change there before it is answered. `undefined` (said in the
 * console) where the browser blocks localStorage.
 *
 * @example
 * const core = createSandboxCore()
 * await core.sandbox.ready
 * const persistence = await persistInLocalStorage(core, 'my-app-sandbox')
 * persistence?.listen(() => Promise.resolve())
 */
export async function persistInLocalStorage(
  core: ReturnType<typeof createSandboxCore>,
  key: string,
): Promise<Persistence | undefined> {
  const storage = openStorage()
  if (!storage) return undefined
  const { sandbox, adopt } = core
  const durable = await core.durable()
  const store = localStorageStore(storage, key, durable)
  const restored = await restore(
    sandbox,
    durable,
    storage,
    key,
    undefined,
    store,
  )
  core.attach(store)
  // The first tab saves its seeded data at once: a tab opened next starts
  // from it, in the same epoch, instead of from data of its own.
  if (!restored) store.save()
  let taking = Promise.resolve()
  let idle = (): Promise<void> => Promise.resolve()
  const onStorage = (event: StorageEvent): void => {
    if (event.key !== key || event.newValue === null) return
    if (event.storageArea !== storage) return
    taking = taking.then(async () => {
      await idle()
      await restore(sandbox, durable, storage, key, adopt, store)
    })
  }
  return {
    restored,
    save: store.save,
    listen(whenIdle) {
      idle = whenIdle
      addEventListener('pagehide', store.save)
      addEventListener('storage', onStorage)
    },
    stop() {
      store.stop()
      removeEventListener('pagehide', store.save)
      removeEventListener('storage', onStorage)
    },
  }
}

/** The memory store saved to localStorage. */
interface LocalStorageStore extends Store {
  /**
   * The whole state the saved data descends from: the same in every tab
   * until one of them resets, loads or restores.
   */
  epoch: string
  /** Writes the sandbox to localStorage now, unless stopped. */
  save(): void
  /** Saves no more (the worker stopped). */
  stop(): void
}

/**
 * The sandbox's store in a browser: the memory store, with every write and
 * every change of the sandbox's own API saved to `storage[key]` before it
 * is answered, as the server's data file keeps them (records, answered
 * `Idempotency-Key`s, queued scenarios, the clock). A full storage is no
 * storage error: the answer stays right in memory, and a reload loses what
 * came since the last save (said once per outage).
 *
 * @example
 * const store = localStorageStore(localStorage, 'my-app-sandbox', await core.durable())
 * core.attach(store)
 */
function localStorageStore(
  storage: Storage,
  key: string,
  durable: DurableState,
): LocalStorageStore {
  let saving = true
  // Whether the last save found the storage full: said once per outage.
  let full = false
  const save = (): void => {
    if (!saving) return
    let text: string
    try {
      const data = durable.dump()
      const offset = Date.parse(data.clock.now) - Date.now()
      text = JSON.stringify({
        version: STORAGE_VERSION,
        epoch: store.epoch,
        data,
        // A running clock that was set keeps its distance from real time.
        clock_offset_ms: data.clock.frozen ? 0 : offset,
      })
    } catch {
      // Still seeding after a reset: the next save catches up.
      return
    }
    try {
      storage.setItem(key, text)
      if (full) {
        full = false
        console.info(`${PREFIX} Saving to localStorage["${key}"] again.`)
      }
    } catch (error) {
      // @note The answer is the sandbox's, in memory, and already decided: a
      // full storage only costs the copy a reload starts from. Each later
      // change tries again, so freeing room brings saving back.
      if (!isQuotaError(error) || full) return
      full = true
      console.warn(fullStorageMessage(key, text.length))
    }
  }
  const store: LocalStorageStore = {
    kind: 'local-storage',
    epoch: newEpoch(),
    // @note Never shown: a full storage is said in the console, and the
    // answer, decided in memory, stands.
    outage: {
      where: 'in localStorage',
      until: 'localStorage has room again',
      code: 'QuotaExceededError',
    },
    async commit() {
      save()
    },
    async saveState() {
      // A whole new state (a reset, a load, a restore): the other tabs
      // take it as it is, not merged with what they hold.
      store.epoch = newEpoch()
      save()
    },
    fault: () => undefined,
    save,
    stop() {
      saving = false
    },
  }
  return store
}

// Ordered by time: of two whole states, the later one is the later epoch.
const newEpoch = (): string =>
  `${Date.now().toString(36).padStart(9, '0')}-${Math.random().toString(36).slice(2)}`

type SavedRecords = Pick<
  SandboxData,
  'accounts' | 'api_keys' | 'customers' | 'tokens'
>

/**
 * Another tab's saved data with this tab's records that it lacks, and
 * whether it lacked any: two tabs that each wrote before taking in the
 * other's save keep both writes.
 */
function mergeRecords(
  theirs: unknown,
  mine: SavedRecords,
): { data: unknown; added: boolean } {
  const unmerged = { data: theirs, added: false }
  const data = theirs as Partial<SavedRecords> | null
  if (typeof data !== 'object' || data === null) return unmerged
  const secrets = new Set(
    [...(data.api_keys ?? []), ...(data.tokens ?? [])].map((r) => r?.secret),
  )
  const merged: Record<string, unknown> = { ...data }
  let added = false
  for (const kind of ['accounts', 'api_keys', 'customers', 'tokens'] as const) {
    const records = data[kind]
    if (!Array.isArray(records)) return unmerged
    const ids = new Set(records.map((record) => record?.id))
    const missing = (mine[kind] as { id: string; secret?: string }[]).filter(
      (record) =>
        !ids.has(record.id) &&
        (record.secret === undefined || !secrets.has(record.secret)),
    )
    merged[kind] = [...records, ...missing]
    if (missing.length > 0) added = true
  }
  return { data: merged, added }
}

/** Whether `error` is a storage's "quota exceeded", by either name browsers give it. */
function isQuotaError(error: unknown): boolean {
  const { name } = error as { name?: unknown }
  return name === 'QuotaExceededError' || name === 'NS_ERROR_DOM_QUOTA_REACHED'
}

/** What a developer reads when the sandbox's data does not fit in localStorage. */
function fullStorageMessage(key: string, characters: number): string {
  return `${PREFIX} localStorage["${key}"] is full: the sandbox's data (${characters} characters) did not fit. It goes on answering from memory, so answers stay right, but changes since the last save are lost on reload. Free room (localStorage.clear(), or this origin's other entries), keep less (a smaller customersPerAccount, a reset) or set persist: false. Each change tries again.`
}

/** The page's localStorage, or `undefined` (said in the console) where the browser blocks it. */
function openStorage(): Storage | undefined {
  try {
    // @note Reading `localStorage` throws where storage is blocked.
    return globalThis.localStorage
  } catch (error) {
    console.warn(
      `${PREFIX} localStorage is not available (${(error as Error).message}): the sandbox will not persist.`,
    )
    return undefined
  }
}

/**
 * Loads what `storage[key]` holds into the sandbox; `true` when something
 * was there and loaded. Saved data that cannot be read is said in the
 * console and the sandbox starts from its seed; with `adopt` (another tab's
 * save) it is ignored.
 */
async function restore(
  sandbox: SandboxCore,
  durable: DurableState,
  storage: Storage,
  key: string,
  // Set for another tab's save: that data is taken in, keeping this tab's
  // journal and queued scenarios, and a bad one is ignored.
  adopt?: (input: unknown) => Promise<void>,
  store?: LocalStorageStore,
): Promise<boolean> {
  const text = storage.getItem(key)
  if (text === null) return false
  try {
    const saved = JSON.parse(text) as {
      version?: unknown
      epoch?: unknown
      data?: unknown
      clock_offset_ms?: unknown
    }
    if (saved?.version !== STORAGE_VERSION) {
      throw new TypeError(`it is not version ${STORAGE_VERSION} of the format`)
    }
    const epoch = typeof saved.epoch === 'string' ? saved.epoch : undefined
    if (adopt && store && epoch !== undefined && epoch < store.epoch) {
      // An older whole state, saved by a tab that had not yet taken this
      // tab's reset in: this tab's newer one is saved again over it.
      store.save()
      return false
    }
    // @note Saved from the same whole state, it lacks only what this tab
    // wrote since: its records are kept, and saved with the other tab's.
    const merging = adopt !== undefined && store?.epoch === epoch
    const mine = merging ? durable.dump() : undefined
    const { data, added } = mine
      ? mergeRecords(saved.data, mine)
      : { data: saved.data, added: false }
    // @note What this page (or another tab) saved: taken as it is.
    await (adopt ? adopt(data) : durable.load(data))
    if (store && epoch !== undefined) store.epoch = epoch
    if (added) store!.save()
    // The answered Idempotency-Keys and the queued scenarios, when kept.
    if (!adopt) durable.restore(saved.data as Record<string, unknown>)
    const offset = saved.clock_offset_ms
    if (
      typeof offset === 'number' &&
      offset !== 0 &&
      !sandbox.clock.frozen &&
      sandbox.options.clockAfterSet === 'running'
    ) {
      sandbox.clock.set(Date.now() + offset)
    }
    return true
  } catch (error) {
    if (adopt) {
      console.warn(
        `${PREFIX} Ignored what another tab saved in localStorage["${key}"]: ${(error as Error).message}`,
      )
      return false
    }
    console.warn(
      `${PREFIX} Ignored what localStorage["${key}"] holds and started from the seed: ${(error as Error).message.replace(/^Failed to load sandbox data: /, '')}`,
    )
    await sandbox.reset()
    return false
  }
}
