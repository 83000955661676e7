// createSandbox(): the sandbox bound to MSW handlers.
import { toMswHandlers } from './msw.ts'
import type { SandboxOptions } from '../options.ts'
import type { Sandbox } from '../sandbox.ts'
import { createSandboxCore } from '../sandbox-core.ts'

/**
 * Creates a sandbox of the Customer and Token Service: its own data, clock,
 * journal and scenarios, and the MSW handlers that answer for it.
 *
 * @example
 * import { setupServer } from 'msw/node'
 * import { createSandbox } from 'customer-token-sandbox'
 *
 * const sandbox = createSandbox({ seed: 1 })
 * const server = setupServer(...sandbox.handlers)
 * @see https://mswjs.io/docs/api/setup-server
 */
export function createSandbox(options?: SandboxOptions): Sandbox {
  const { sandbox, router } = createSandboxCore(options)
  return Object.assign(sandbox, { handlers: toMswHandlers(router) })
}
