// The Playwright fixture: a sandbox server per run, an account per test.
import { test as base } from '@playwright/test'
import { VISIBLE_CHARACTER_PATTERN } from '../_utils.ts'
import {
  JS_NAMING,
  OptionsError,
  type OptionNaming,
} from '../option-messages.ts'
import type { JournalEntry, Operation } from '../request/journal.ts'
import type { SandboxServer, SandboxServerOptions } from './node.ts'
import type { ScenarioOptions } from '../request/scenarios.ts'

// A visible character, as account_name needs one.
const VISIBLE = new RegExp(VISIBLE_CHARACTER_PATTERN, 'u')

/** The environment variable that names a running sandbox for the fixture. */
export const SANDBOX_URL_ENV = 'CUSTOMER_TOKEN_SANDBOX_URL'
/** The environment variable that holds that sandbox's admin token, if it has one. */
export const SANDBOX_ADMIN_TOKEN_ENV = 'CUSTOMER_TOKEN_SANDBOX_ADMIN_TOKEN'

/** A scenario as `/__sandbox/account/scenarios` answers it. */
export interface SandboxFixtureScenario {
  id: string
  operation: Operation | '*'
  status: number | null
  delay_ms: number | null
  network_error: boolean
  remaining: number
}

/** What the clock endpoints of an account answer. */
export interface SandboxFixtureClock {
  account_id: string
  now: string
  frozen: boolean
  /** Whether the account has a clock of its own. */
  own: boolean
}

/**
 * The `sandbox` fixture: a fresh account of its own on a shared sandbox
 * server, and that account's clock, scenario queue and journal. Parallel
 * tests never see each other's time, faults or requests.
 */
export interface SandboxFixture {
  /** The sandbox's origin, e.g. `http://127.0.0.1:4100`. */
  readonly url: string
  /** The account's API key (`sk_test_…`), shown to this test only. */
  readonly key: string
  readonly accountId: string
  /** `{ authorization: 'Bearer <key>' }`, for `request.post(url, { headers })`. */
  readonly headers: { authorization: string }
  /** The account's clock: its own from the first move on, the server's until then. */
  readonly clock: {
    /** The account's time. */
    now(): Promise<Date>
    /**
     * Moves the account's clock by `ms` milliseconds from where it is now
     * (negative goes back): its tokens expire, its records are stamped, on
     * that time. `ms` must be a whole number of seconds, as the server takes
     * `advance_seconds`; the time itself keeps its milliseconds, and on a
     * server with `clockAfterSet: 'running'` the clock runs on from there
     * (with the default `'frozen'` it stays).
     * @example await sandbox.clock.advance(3600 * 1000)
     */
    advance(ms: number): Promise<Date>
    /** Sets the account's clock to `time`. */
    set(time: Date | string): Promise<Date>
    /** Back to following the server's clock. */
    reset(): Promise<Date>
  }
  /** Faults that only this account's requests consume. */
  readonly scenarios: {
    /**
     * Makes the account's next `times` (default 1) calls of `operation` fail
     * with `status`, wait `delayMs` or drop the connection.
     * @example await sandbox.scenarios.next('createCustomer', { status: 503 })
     */
    next(
      operation: Operation | '*',
      options: ScenarioOptions,
    ): Promise<SandboxFixtureScenario>
    list(): Promise<SandboxFixtureScenario[]>
    clear(): Promise<void>
  }
  /** The journal's entries of this account's requests, newest first. */
  readonly journal: {
    list(options?: { limit?: number }): Promise<JournalEntry[]>
    last(): Promise<JournalEntry | undefined>
    /** Hides the entries so far from this account's view. */
    clear(): Promise<void>
  }
}

/** Options of the fixture, set in `playwright.config.ts` under `use`. */
export interface SandboxFixtureOptions {
  /**
   * A running sandbox to mint accounts on. When unset, the fixture reads
   * `CUSTOMER_TOKEN_SANDBOX_URL` (which `sandboxGlobalSetup()` sets), and
   * without it each worker starts a server of its own.
   * @default undefined
   * @example use: { sandboxUrl: 'http://127.0.0.1:4100' }
   */
  sandboxUrl: string | undefined
  /**
   * The admin token of that sandbox, to mint accounts on a server that has
   * one; `CUSTOMER_TOKEN_SANDBOX_ADMIN_TOKEN` when unset.
   * @default undefined
   */
  sandboxAdminToken: string | undefined
  /**
   * Options of the server a worker starts when there is no URL.
   * @default { seed: 1 }
   */
  sandboxServerOptions: SandboxServerOptions
}

/**
 * Starts one sandbox server for the whole run and tells every worker its
 * URL (through `CUSTOMER_TOKEN_SANDBOX_URL`); Playwright runs the function
 * it returns as the teardown.
 *
 * @example
 * // global-setup.ts, named by playwright.config.ts as `globalSetup: './global-setup.ts'`
 * import { sandboxGlobalSetup } from 'customer-token-sandbox/playwright'
 * export default sandboxGlobalSetup({ seed: 1 })
 */
export function sandboxGlobalSetup(
  options: SandboxServerOptions = {},
): () => Promise<() => Promise<void>> {
  return async () => {
    const server = await startServer(options, 'sandboxGlobalSetup()', {
      name: (option) => `the ${option} option of sandboxGlobalSetup()`,
      set: (option, value) =>
        `sandboxGlobalSetup({ ${JS_NAMING.set(option, value)} })`,
    })
    process.env[SANDBOX_URL_ENV] = server.url
    if (options.adminToken !== undefined)
      process.env[SANDBOX_ADMIN_TOKEN_ENV] = options.adminToken
    return () => server.close()
  }
}

/**
 * Starts a server for the run or a worker. A failure to start names the
 * option to change where the config gives it (`naming`), not as a flag.
 */
async function startServer(
  options: SandboxServerOptions,
  starter: string,
  naming: OptionNaming,
): Promise<SandboxServer> {
  // Loaded only when a server is started here: a run against a URL needs none of it.
  const { createSandboxServer } = await import('./node.ts')
  try {
    return await createSandboxServer({
      port: 0,
      playground: false,
      seed: 1,
      ...options,
    })
  } catch (error) {
    if (!(error instanceof OptionsError)) throw error
    throw new Error(
      `Failed to start the sandbox server of ${starter}: ${error.explain(naming)}`,
      { cause: error },
    )
  }
}

const WHERE_FROM = `is it running there? Start one for the run with sandboxGlobalSetup() as the globalSetup (or \`npx customer-token-sandbox\`), and check use.sandboxUrl in playwright.config.ts and ${SANDBOX_URL_ENV}, which name it`

/** Answers a non-2xx with an error that carries the problem's detail. */
async function call<T>(
  url: string,
  method: string,
  key: string | undefined,
  body?: unknown,
): Promise<T> {
  let response: Response
  try {
    response = await fetch(url, {
      method,
      headers: {
        ...(key !== undefined && { authorization: `Bearer ${key}` }),
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
  } catch (error) {
    // @note undici says only "fetch failed"; the reason is in its cause.
    const cause = (error as { cause?: { code?: string; message?: string } })
      .cause
    throw new Error(
      `Failed to reach the sandbox at ${new URL(url).origin} (${cause?.code ?? cause?.message ?? (error as Error).message}): ${WHERE_FROM}`,
      { cause: error },
    )
  }
  const text = await response.text()
  if (!response.ok) {
    let detail = text.slice(0, 300)
    try {
      detail = (JSON.parse(text) as { detail?: string }).detail ?? detail
    } catch {
      // Not problem JSON: not a sandbox answering, most likely.
      detail =
        `${detail.slice(0, 100)} (not an answer of a sandbox server: ${WHERE_FROM})`.trim()
    }
    throw new Error(
      `Failed to ${method} ${new URL(url).pathname}: ${response.status} ${detail}`,
    )
  }
  return (text === '' ? undefined : JSON.parse(text)) as T
}

/**
 * The fixture object of one account on the sandbox at `url`.
 *
 * @example
 * const sandbox = await createSandboxFixture('http://127.0.0.1:4100', { accountName: 'checkout test' })
 * await sandbox.clock.advance(3600 * 1000)
 */
export async function createSandboxFixture(
  url: string,
  {
    accountName,
    adminToken,
  }: { accountName?: string; adminToken?: string | undefined } = {},
): Promise<SandboxFixture> {
  const origin = url.replace(/\/+$/, '')
  if (!URL.canParse(origin) || !/^https?:$/.test(new URL(origin).protocol)) {
    throw new TypeError(
      `Failed to use the sandbox at ${JSON.stringify(url)}: it is not an http(s) URL such as http://127.0.0.1:4100 (check use.sandboxUrl in playwright.config.ts and ${SANDBOX_URL_ENV}).`,
    )
  }
  const created = await call<{ api_key: string; account_id: string }>(
    `${origin}/__sandbox/api-keys`,
    'POST',
    adminToken,
    accountName === undefined ? {} : { account_name: accountName },
  ).catch((error: Error) => {
    // @note The server's 401 speaks of a header; the fixture sends it itself.
    if (!/: 401 /.test(error.message)) throw error
    throw new Error(
      `${error.message} The fixture sends the admin token given as use: { sandboxAdminToken } in playwright.config.ts or in ${SANDBOX_ADMIN_TOKEN_ENV}; give it the token the server was started with (its adminToken option, or --admin-token on the command line).`,
      { cause: error },
    )
  })
  const key = created.api_key
  const account = (path: string, method = 'GET', body?: unknown) =>
    call<unknown>(`${origin}/__sandbox/account/${path}`, method, key, body)
  const clockAt = async (body: Promise<unknown>) =>
    new Date(((await body) as SandboxFixtureClock).now)
  return {
    url: origin,
    key,
    accountId: created.account_id,
    headers: { authorization: `Bearer ${key}` },
    clock: {
      now: () => clockAt(account('clock')),
      advance(ms) {
        if (!Number.isInteger(ms) || ms % 1000 !== 0) {
          throw new RangeError(
            `Failed to advance the sandbox clock: the server moves it in whole seconds, and ${String(ms)} ms is not a whole number of them.`,
          )
        }
        return clockAt(account('clock', 'POST', { advance_seconds: ms / 1000 }))
      },
      set(time) {
        if (time instanceof Date && Number.isNaN(time.getTime())) {
          throw new RangeError(
            'Failed to set the sandbox clock: the Date given is invalid (new Date() of something that is not a time).',
          )
        }
        return clockAt(
          account('clock', 'POST', {
            now: time instanceof Date ? time.toISOString() : time,
          }),
        )
      },
      reset: () => clockAt(account('clock', 'DELETE')),
    },
    scenarios: {
      next: (operation, { status, delayMs, networkError, times }) =>
        account('scenarios', 'POST', {
          operation,
          ...(status !== undefined && { status }),
          ...(delayMs !== undefined && { delay_ms: delayMs }),
          ...(networkError && { network_error: true }),
          ...(times !== undefined && { times }),
        }) as Promise<SandboxFixtureScenario>,
      list: async () =>
        (
          (await account('scenarios')) as {
            scenarios: SandboxFixtureScenario[]
          }
        ).scenarios,
      clear: async () => {
        await account('scenarios', 'DELETE')
      },
    },
    journal: {
      list: async ({ limit } = {}) =>
        (
          (await account(
            limit === undefined ? 'requests' : `requests?limit=${limit}`,
          )) as { requests: JournalEntry[] }
        ).requests,
      last: async () =>
        ((await account('requests?limit=1')) as { requests: JournalEntry[] })
          .requests[0],
      clear: async () => {
        await account('requests', 'DELETE')
      },
    },
  }
}

/**
 * Playwright's `test` with a `sandbox` fixture: each test gets a fresh
 * account of its own (its `key`, `clock`, `scenarios` and `journal`) on a
 * sandbox server that the run shares. Uses no browser and no msw.
 *
 * @example
 * import { test, expect } from 'customer-token-sandbox/playwright'
 *
 * test('a token expires on the account clock', async ({ sandbox, request }) => {
 *   const token = await request.post(`${sandbox.url}/v2/tokens`, {
 *     headers: sandbox.headers,
 *     data: { scopes: ['customers:write'], expires_in: 60 },
 *   })
 *   await sandbox.clock.advance(60 * 1000)
 *   // …the token now answers 401 token_expired; other tests' tokens do not move
 * })
 * @see https://playwright.dev/docs/test-fixtures
 */
export const test = base.extend<
  { sandbox: SandboxFixture },
  SandboxFixtureOptions & {
    sandboxServer: { url: string; adminToken?: string }
  }
>({
  sandboxUrl: [undefined, { scope: 'worker', option: true }],
  sandboxAdminToken: [undefined, { scope: 'worker', option: true }],
  sandboxServerOptions: [{}, { scope: 'worker', option: true }],
  sandboxServer: [
    async (
      { sandboxUrl, sandboxAdminToken, sandboxServerOptions },
      use,
    ): Promise<void> => {
      const url = sandboxUrl ?? process.env[SANDBOX_URL_ENV]
      const adminToken =
        sandboxAdminToken ?? process.env[SANDBOX_ADMIN_TOKEN_ENV]
      if (url !== undefined && url !== '') {
        await use({ url, ...(adminToken !== undefined && { adminToken }) })
        return
      }
      // @note No URL: this worker starts a server of its own, once.
      const server = await startServer(
        sandboxServerOptions,
        'the sandbox fixture (no sandboxUrl is set, so each worker starts one)',
        {
          name: (option) =>
            `use.sandboxServerOptions.${option} in playwright.config.ts`,
          set: (option, value) =>
            `use: { sandboxServerOptions: { ${JS_NAMING.set(option, value)} } }`,
        },
      )
      try {
        await use({
          url: server.url,
          ...(sandboxServerOptions.adminToken !== undefined && {
            adminToken: sandboxServerOptions.adminToken,
          }),
        })
      } finally {
        await server.close()
      }
    },
    { scope: 'worker' },
  ],
  sandbox: async ({ sandboxServer }, use, testInfo) => {
    // account_name takes 1 to 200 characters (code points), one of them
    // visible: a title without one (only emoji modifiers or zero-width
    // characters) names no account rather than failing the test.
    const name = Array.from(testInfo.title.trim()).slice(0, 200).join('')
    await use(
      await createSandboxFixture(sandboxServer.url, {
        ...(VISIBLE.test(name) && { accountName: name }),
        adminToken: sandboxServer.adminToken,
      }),
    )
  },
})

export { expect } from '@playwright/test'
