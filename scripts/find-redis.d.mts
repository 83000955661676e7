/** The names the server goes by, Redis's first. */
export declare const REDIS_SERVER_NAMES: readonly string[]
/** Where Debian's packages put them. */
export declare const SYSTEM_REDIS_SERVER: readonly string[]
/**
 * The path of a `redis-server`: `REDIS_SERVER`, `redis-server` on the PATH,
 * Debian's, `valkey-server`; as root in CI, Debian's installed with apt-get
 * when none is found (and any service the package started stopped again).
 */
export declare function findRedisServer(options?: {
  env?: Record<string, string | undefined>
  install?: boolean
  log?: (message: string) => void
}): Promise<string>
