// The sandbox options that a verify report's observations amount to.
import type { SandboxOptions } from '../../options.ts'
import { SERVER_KEYS } from '../flags.ts'

/**
 * The sandbox options of a config file, without the server's.
 *
 * @example
 * sandboxOptionsOf({ port: 4100, uniqueEmail: true }) // { uniqueEmail: true }
 */
export function sandboxOptionsOf(
  config: Record<string, unknown>,
): SandboxOptions {
  return Object.fromEntries(
    Object.entries(config).filter(([key]) => !SERVER_KEYS.has(key)),
  ) as SandboxOptions
}
