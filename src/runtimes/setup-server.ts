// setupSandboxServer(): msw's setupServer with the sandbox's handlers.
import { setupServer } from 'msw/node'
import type { Sandbox } from '../sandbox.ts'

/** The server `setupSandboxServer` returns: msw's own, whichever major is installed. */
export type SandboxMswServer = ReturnType<typeof setupServer>

/** What `setupSandboxServer` does with requests that no handler answers. */
export type UnhandledStrategy = 'bypass' | 'warn' | 'error'

const UNHANDLED_STRATEGIES: readonly unknown[] = ['bypass', 'warn', 'error']

/** Options of `setupSandboxServer()`. */
export interface SetupSandboxServerOptions {
  /**
   * What happens to a request no handler matches (a call your code makes to
   * an API the sandbox does not imitate): let it through, warn, or fail it.
   * The same on msw 2 (`onUnhandledRequest`) and msw 3 (`onUnhandledFrame`).
   * @default 'error'
   * @example setupSandboxServer(sandbox, { onUnhandled: 'warn' })
   */
  onUnhandled?: UnhandledStrategy
}

/**
 * msw's `setupServer` with the sandbox's handlers, whose `listen()` applies
 * `onUnhandled` under the name the installed msw major reads: one call that
 * is right on msw 2 and msw 3.
 *
 * @example
 * import { createSandbox } from 'customer-token-sandbox'
 * import { setupSandboxServer } from 'customer-token-sandbox/node'
 *
 * const sandbox = createSandbox({ seed: 1 })
 * const server = setupSandboxServer(sandbox, { onUnhandled: 'error' })
 * beforeAll(() => server.listen())
 * beforeEach(() => sandbox.reset())
 * afterAll(() => server.close())
 * @see https://mswjs.io/docs/api/setup-server
 */
export function setupSandboxServer(
  sandbox: Pick<Sandbox, 'handlers'>,
  options: SetupSandboxServerOptions = {},
): SandboxMswServer {
  if (
    !Array.isArray((sandbox as Partial<typeof sandbox> | undefined)?.handlers)
  ) {
    throw new TypeError(
      "Failed to set up the sandbox server: its first argument must be the sandbox that createSandbox() returned, as in setupSandboxServer(createSandbox(), { onUnhandled: 'error' }).",
    )
  }
  const { onUnhandled = 'error' } = options
  if (
    typeof onUnhandled !== 'function' &&
    !UNHANDLED_STRATEGIES.includes(onUnhandled)
  ) {
    throw new TypeError(
      `Failed to set up the sandbox server: onUnhandled must be "error", "warn" or "bypass" (got ${JSON.stringify(String(onUnhandled).slice(0, 50))}).`,
    )
  }
  const server = setupServer(...sandbox.handlers)
  const listen = server.listen.bind(server)
  // @note msw 2 reads onUnhandledRequest and msw 3 onUnhandledFrame; each
  // ignores the other's name, so passing both is right on either.
  server.listen = (listenOptions) =>
    listen({
      onUnhandledRequest: onUnhandled,
      onUnhandledFrame: onUnhandled,
      ...listenOptions,
    } as Parameters<typeof listen>[0])
  return server
}
