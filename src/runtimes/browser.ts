// The browser runtime: the sandbox behind an MSW worker (its persistence in localStorage is local-storage.ts).
import { setupWorker, type SetupWorker, type StartOptions } from 'msw/browser'
import { toMswHandlers } from './msw.ts'
import type { SandboxOptions } from '../options.ts'
import type { Sandbox } from '../sandbox.ts'
import { createSandboxCore } from '../sandbox-core.ts'

/** Where MSW's worker script is served unless told otherwise. */
export const DEFAULT_WORKER_URL = '/mockServiceWorker.js'
/** The localStorage key of `persist: true`. */
export const DEFAULT_STORAGE_KEY = 'customer-token-sandbox'

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
    throw (await import('./worker-errors.ts')).insecurePage()
  }
  const {
    persist = false,
    quiet = true,
    onUnhandledRequest = 'bypass',
    serviceWorker,
    ...sandboxOptions
  } = options
  const key = persist === true ? DEFAULT_STORAGE_KEY : persist || ''
  const core = createSandboxCore({
    // @note Random ids, as the standalone server: ids drawn from the seed
    // would start again after a reload and collide with the saved ones.
    deterministic: false,
    ...sandboxOptions,
  })
  const { sandbox, router } = core
  await sandbox.ready
  // @note Loaded only by a page that persists: the entry stays small.
  const persistence =
    persist === false
      ? undefined
      : await (
          await import('./local-storage.ts')
        ).persistInLocalStorage(core, key)
  const save = (): void => persistence?.save()

  // Requests being answered: another tab's save is taken in between them,
  // as taking it replaces the data that a request in flight writes to.
  let inFlight = 0
  let idle: (() => void) | undefined
  const counted = {
    patterns: router.patterns,
    async fetch(request: Request) {
      inFlight++
      try {
        return await router.fetch(request)
      } finally {
        if (--inFlight === 0) idle?.()
      }
    },
  }
  // Settles once no request is being answered, checked again after each
  // wait: another may have begun meanwhile.
  const whenIdle = (): Promise<void> =>
    inFlight === 0
      ? Promise.resolve()
      : new Promise<void>((done) => (idle = done)).then(whenIdle)
  const worker = setupWorker(...toMswHandlers(counted))
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
    throw (await import('./worker-errors.ts')).workerNotStarted(
      scriptUrl,
      error,
    )
  }
  if (registration && !location.href.startsWith(registration.scope)) {
    // @note msw only warns, and not at all when quiet: every request would
    // then go to the network with nothing said.
    await worker.stop()
    throw (await import('./worker-errors.ts')).pageOutOfScope(
      scriptUrl,
      registration.scope,
    )
  }
  persistence?.listen(whenIdle)

  let stopped = false
  return Object.assign(sandbox, {
    handlers: toMswHandlers(counted),
    worker,
    restored: persistence?.restored ?? false,
    save,
    async stop() {
      if (stopped) return
      stopped = true
      const slot = pageSlot()
      if ((slot.running as object | undefined) === sandbox)
        slot.running = undefined
      save()
      persistence?.stop()
      await worker.stop()
    },
  })
}
