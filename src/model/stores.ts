// The stores a server opens from a URL (`--store redis://…`), one entry
// each: a new store is its own module (`*-store.ts`) and an entry here.
import type { FleetOptions } from './fleet-options.ts'
import type { Store, StoreSource } from './store.ts'

/** What a store opened from a URL is given. */
export interface UrlStoreOptions {
  /** The URL, with one of the entry's schemes. */
  url: string
  /** Prefix of every key, so that several sandboxes can share one store. */
  namespace?: string
  /** The most customers and tokens a replica keeps loaded, for a store that loads them as asked. */
  cacheRecords?: number
  /** Hears the store's outages and recoveries, one line each. */
  onLog?: (line: string) => void
  /**
   * The most records in all (`limits.records`), for a store that counts
   * them across its replicas itself.
   */
  maxRecords?: number
  /** The journal every replica shares (`journalLimit` entries), for a store that keeps one. */
  journal?: { limit: number }
  /** This replica's options, kept as the fleet's when the store holds none yet. */
  fleet?: FleetOptions
}

/** A store opened from a URL: the `Store` a server writes through, and its end. */
export type UrlStore = Store & {
  /**
   * Whether the store already held this sandbox, whose state the server took
   * in place of its own seed (and of `from`).
   */
  readonly joined: boolean
  /**
   * The options the fleet's replicas share, as the store keeps them (this
   * replica's, when it kept them first), and where, as a message names it;
   * none when the store keeps none.
   */
  readonly fleet?: { options: FleetOptions; where: string }
  close(): Promise<void>
}

/** One kind of store that a URL names. */
export interface UrlStoreEntry {
  /** The URL schemes it opens, without `://`. */
  schemes: readonly string[]
  /** What it is, with its URL's shape, for `--store`'s help. */
  describes: string
  /**
   * Connects and loads what the store holds; a store that cannot be reached
   * rejects with one line naming the URL.
   */
  open(options: UrlStoreOptions, source: StoreSource): Promise<UrlStore>
}

/**
 * Every store that a URL opens.
 *
 * @note Each `open` imports its module on demand: the browser bundle, which
 * never opens one, never holds a store's client library.
 */
export const URL_STORES: readonly UrlStoreEntry[] = [
  {
    schemes: ['redis', 'rediss'],
    describes: 'Redis or Valkey (redis://host:port/db)',
    open: async (options, source) =>
      (await import('./redis-store.ts')).openRedisStore(options, source),
  },
]

/**
 * The entry whose scheme starts `url`, if any.
 *
 * @example
 * findUrlStore('redis://127.0.0.1:6379/0')?.schemes // ['redis', 'rediss']
 */
export function findUrlStore(url: string): UrlStoreEntry | undefined {
  return URL_STORES.find((entry) =>
    entry.schemes.some((scheme) => url.startsWith(`${scheme}://`)),
  )
}

/**
 * The URLs a store option takes, as a message names them.
 *
 * @example
 * urlStoreSchemes() // 'redis:// or rediss://'
 */
export function urlStoreSchemes(): string {
  const all = URL_STORES.flatMap((entry) => entry.schemes).map(
    (scheme) => `${scheme}://`,
  )
  return all.length === 1
    ? all[0]!
    : `${all.slice(0, -1).join(', ')} or ${all.at(-1)!}`
}
