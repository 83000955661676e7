/** The names the server goes by, Redis's first. */
export declare const REDIS_SERVER_NAMES: readonly string[]
/** Where Debian's packages put them. */
export declare const SYSTEM_REDIS_SERVER: readonly string[]
/**
 * The path of a `redis-server`: `REDIS_SERVER`, `redis-server` on the PATH,
 * Debian's, `valkey-server`; as root in CI, Debian's installed with apt-get
 * when none is found (and any service the package started stopped again).
 * With `valkey`, a `valkey-server` alone: `VALKEY_SERVER`, then on the PATH
 * or Debian's, installed from the release's backports where its main suite
 * has none (Debian 12).
 */
export declare function findRedisServer(options?: {
  env?: Record<string, string | undefined>
  install?: boolean
  log?: (message: string) => void
  valkey?: boolean
}): Promise<string>
