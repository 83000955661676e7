// The browser runtime: the sandbox behind an MSW worker, and its persistence in localStorage.
import { setupWorker, type SetupWorker, type StartOptions } from 'msw/browser'
import { toMswHandlers } from './msw.ts'
import type { SandboxOptions } from '../options.ts'
import type { Sandbox, SandboxCore } from '../sandbox.ts'
import { createSandboxCore, type DurableState } from '../sandbox-core.ts'
import type { Store } from '../model/store.ts'

/** Where MSW's worker script is served unless told otherwise. */
export const DEFAULT_WORKER_URL = '/mockServiceWorker.js'
/** The localStorage key of `persist: true`. */
export const DEFAULT_STORAGE_KEY = 'customer-token-sandbox'

const STORAGE_VERSION = 1
const PREFIX = '[customer-token-sandbox]'

/** Options of `startSandboxWorker()`: the sandbox's own, plus the worker's. */
export interface StartSandboxWorkerOptions extends SandboxOptions {
  /**
   * Keeps every record (accounts, keys, customers, tokens), the clock, the
   * answered `Idempotency-Key`s and the queued scenarios in localStorage,
   * as the server's data file does: saved before each write is answered and
   * when the page is hidden, and loaded on the next start. `true` uses
   * `DEFAULT_STORAGE_KEY`; a string is a key of your own.
   * @default false
   * @example startSandboxWorker({ persist: 'my-app-sandbox' })
   */
  persist?: boolean | string
  /**
   * Whether to stay silent in the console; `false` logs each intercepted
   * request as MSW does.
   * @default true
   * @example startSandboxWorker({ quiet: false })
   */
  quiet?: boolean
  /**
   * What to do with a request the sandbox does not answer (your app's own
   * assets and other APIs).
   * @default 'bypass'
   * @example startSandboxWorker({ onUnhandledRequest: 'warn' })
   */
  onUnhandledRequest?: 'bypass' | 'warn' | 'error'
  /**
   * Where the worker script is served and how it registers; under a base
   * path, the script's URL under it.
   * @default { url: '/mockServiceWorker.js' }
   * @example startSandboxWorker({ serviceWorker: { url: `${import.meta.env.BASE_URL}mockServiceWorker.js` } })
   */
  serviceWorker?: { url?: string; options?: RegistrationOptions }
}

/** A sandbox answering a page's requests through MSW's service worker. */
export interface SandboxWorker extends Sandbox {
  /**
   * The MSW worker, for overrides of your own.
   * @example sandboxWorker.worker.use(http.get('/flags', () => HttpResponse.json({})))
   */
  readonly worker: SetupWorker
  /** Whether the data and clock came from localStorage (`persist` on and something saved). */
  readonly restored: boolean
  /**
   * Writes the data and clock to localStorage now; does nothing when `persist`
   * is off. Requests save by themselves; call it after changing the sandbox
   * through the JavaScript API if the page may be killed without `pagehide`.
   */
  save(): void
  /** Stops intercepting, after a last save when `persist` is on. */
  stop(): Promise<void>
}

/**
 * Starts MSW's service worker with the sandbox's handlers, so that the page's
 * `fetch` and `XMLHttpRequest` calls to the API and to `/__sandbox/` are
 * answered in the browser. Quiet, and other requests pass through untouched.
 *
 * @example
 * import { startSandboxWorker } from 'customer-token-sandbox/browser'
 *
 * const sandbox = await startSandboxWorker({ persist: true })
 * await fetch('/v1/customers', { method: 'POST', headers: { authorization: 'Bearer sk_test_DemoKeyForTheSandbox0001', 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }) })
 * sandbox.clock.advance(3600_000)
 * @see https://mswjs.io/docs/api/setup-worker
 */
export async function startSandboxWorker(
  options: StartSandboxWorkerOptions = {},
): Promise<SandboxWorker> {
  // @note msw intercepts a page once: a second start while one runs (React's
  // StrictMode runs an effect twice, HMR runs a module again) answered every
  // request twice on msw 2 and threw on msw 3. Starts take turns, and the
  // newest stops the one before it and takes over.
  const slot = pageSlot()
  const previous = slot.turn
  let done!: () => void
  slot.turn = new Promise((resolve) => (done = resolve))
  try {
    await previous
    await slot.running?.stop()
    const started = await startOne(options)
    slot.running = started
    return started
  } finally {
    done()
  }
}

/** The page's one running sandbox worker, shared by every copy of this module. */
interface PageSlot {
  turn: Promise<void>
  running?: SandboxWorker | undefined
}

const SLOT = Symbol.for('customer-token-sandbox:worker')

function pageSlot(): PageSlot {
  const page = globalThis as { [SLOT]?: PageSlot }
  return (page[SLOT] ??= { turn: Promise.resolve() })
}

async function startOne(
  options: StartSandboxWorkerOptions,
): Promise<SandboxWorker> {
  if (globalThis.isSecureContext === false) {
    // @note Service workers and crypto.randomUUID (which @msw/data's
    // records need) exist in secure contexts only: `vite --host` opened
    // from another machine by its address failed on randomUUID.
    throw new Error(
      `${PREFIX} The sandbox cannot run at ${location.origin}: browsers give service workers only to secure pages, those served over https or from localhost (127.0.0.1, [::1]). Open the app at http://localhost, or serve it over https (for Vite, server.https with a certificate, as @vitejs/plugin-basic-ssl makes).`,
    )
  }
  const {
    persist = false,
    quiet = true,
    onUnhandledRequest = 'bypass',
    serviceWorker,
    ...sandboxOptions
  } = options
  const storage = persist === false ? undefined : openStorage()
  const key = persist === true ? DEFAULT_STORAGE_KEY : persist || ''
  const core = createSandboxCore({
    // @note Random ids, as the standalone server: ids drawn from the seed
    // would start again after a reload and collide with the saved ones.
    deterministic: false,
    ...sandboxOptions,
  })
  const { sandbox, router, adopt, durable } = core
  const store = storage && localStorageStore(storage, key, durable)

  await sandbox.ready
  let restored = false
  if (storage) restored = await restore(sandbox, durable, storage, key)
  if (store) core.attach(store)
  const save = (): void => store?.save()

  const worker = setupWorker(...toMswHandlers(router))
  const scriptUrl = serviceWorker?.url ?? DEFAULT_WORKER_URL
  let registration: ServiceWorkerRegistration | undefined
  try {
    registration = await worker.start({
      quiet,
      // msw 2 calls it onUnhandledRequest, msw 3 onUnhandledFrame.
      onUnhandledRequest,
      onUnhandledFrame: onUnhandledRequest,
      serviceWorker: {
        url: scriptUrl,
        ...(serviceWorker?.options && { options: serviceWorker.options }),
      },
    } as StartOptions)
  } catch (error) {
    // @note A dev server that answers a missing file with the app's page
    // makes msw report a MIME type, with no word of the worker script.
    throw new Error(
      `${PREFIX} The service worker did not start from ${new URL(scriptUrl, location.href).href}: ${reason((error as Error).message)} ${WORKER_HINT}`,
      { cause: error },
    )
  }
  if (registration && !location.href.startsWith(registration.scope)) {
    // @note msw only warns, and not at all when quiet: every request would
    // then go to the network with nothing said.
    await worker.stop()
    throw new Error(
      `${PREFIX} The service worker at ${new URL(scriptUrl, location.href).href} controls ${registration.scope} only, and this page (${location.href}) is outside it, so the sandbox would answer nothing here. Serve mockServiceWorker.js from a folder that contains the page (the site's root: \`npx msw init public\`), or serve it with the header "Service-Worker-Allowed: /" and pass serviceWorker: { url, options: { scope: '/' } }.`,
    )
  }
  // Another tab of this origin saved: take its data, so that its records are
  // not overwritten by this tab's next save.
  const onStorage = (event: StorageEvent): void => {
    if (event.key !== key || event.newValue === null) return
    if (event.storageArea !== storage) return
    void restore(sandbox, durable, storage, key, adopt)
  }
  if (storage) {
    addEventListener('pagehide', save)
    addEventListener('storage', onStorage)
  }

  let stopped = false
  return Object.assign(sandbox, {
    handlers: toMswHandlers(router),
    worker,
    restored,
    save,
    async stop() {
      if (stopped) return
      stopped = true
      const slot = pageSlot()
      if ((slot.running as object | undefined) === sandbox)
        slot.running = undefined
      save()
      store?.stop()
      removeEventListener('pagehide', save)
      removeEventListener('storage', onStorage)
      await worker.stop()
    },
  })
}

/** The memory store saved to localStorage: what `persist` turns on. */
interface LocalStorageStore extends Store {
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
 * const store = localStorageStore(localStorage, 'my-app-sandbox', core.durable)
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
  return {
    kind: 'local-storage',
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
      save()
    },
    fault: () => undefined,
    save,
    stop() {
      saving = false
    },
  }
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

const WORKER_HINT =
  "Serve msw's mockServiceWorker.js at that URL: copy it into the folder your server serves as the site's root with `npx msw init <folder>` (`npx msw init public` for Vite), or add sandbox() from customer-token-sandbox/vite to the Vite config, which serves it; or pass serviceWorker: { url } where it is served."

/** What went wrong, from msw's message without its own advice. */
function reason(message: string): string {
  const browser = /with script \(.*?\): (.*)/.exec(message)
  if (browser) return browser[1]!.trim()
  return message
    .replace(/^\[MSW\]\s*/, '')
    .replace(/\s+/g, ' ')
    .trim()
}

async function restore(
  sandbox: SandboxCore,
  durable: DurableState,
  storage: Storage,
  key: string,
  // Set for another tab's save: that data is taken in, keeping this tab's
  // journal and queued scenarios, and a bad one is ignored.
  adopt?: (input: unknown) => Promise<void>,
): Promise<boolean> {
  const text = storage.getItem(key)
  if (text === null) return false
  try {
    const saved = JSON.parse(text) as {
      version?: unknown
      data?: unknown
      clock_offset_ms?: unknown
    }
    if (saved?.version !== STORAGE_VERSION) {
      throw new TypeError(`it is not version ${STORAGE_VERSION} of the format`)
    }
    await (adopt ? adopt(saved.data) : sandbox.load(saved.data))
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
