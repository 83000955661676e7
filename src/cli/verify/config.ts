import type { SandboxOptions } from '../../options.ts'

/** Options of the standalone server (and the CLI) that a config file may hold beside the sandbox's; the CLI reads config files with this list. */
export const SERVER_KEYS: ReadonlySet<string> = new Set([
  'port',
  'host',
  'adminToken',
  'adminOrigins',
  'allowedHosts',
  'headersTimeout',
  'requestTimeout',
  'keepAliveTimeout',
  'maxHeadersCount',
  'maxConnections',
  'dataFile',
  // Deprecated and ignored: every write is stored before it is answered.
  'dataFileDelayMs',
  'logFormat',
  'quiet',
])

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
