// The store a fleet of replicas shares: one ordered log of writes in Redis
// (or Valkey), appended with a compare-and-swap on its length.
import { hash } from 'node:crypto'
import {
  ClientClosedError,
  ClientOfflineError,
  createClient,
  createCluster,
  ErrorReply,
  MaxCommandRedirectionsError,
  ReconnectStrategyError,
} from '@redis/client'
import { redactUrl, sleep } from '../_utils.ts'
import type { SandboxData } from './schemas.ts'
import type { CreatedRecord } from './db.ts'
import type { JournalEntry } from './journal-entry.ts'
import { parseFleetOptions, type FleetOptions } from './fleet-options.ts'
import {
  MAX_CHANGES_BETWEEN_STATES,
  StoreConflict,
  type DurableExtras,
  type Replaced,
  type SharedJournal,
  type SharedSnapshotInfo,
  type SharedSnapshots,
  type Store,
  type StoreFault,
  type StoreSource,
  type StoreWrite,
} from './store.ts'
import {
  ACCOUNT_APPEND,
  ACCOUNT_READ,
  ADD_EXPIRING,
  COUNT_RECORDS,
  RESERVE,
  APPEND,
  APPEND_STATE,
  HIT,
  INDEX,
  INSPECT,
  JOIN,
  MARK_PERSISTED,
  JOURNAL,
  LENGTH,
  LOAD,
  LOOKUP,
  REGAIN_GEN,
  READ,
  REMARK,
  TAKE_SNAPSHOT,
} from './redis-scripts.ts'
import { LimitReachedError, limitHint } from './limit-reached.ts'

/**
 * One entry of the log: a write (a record an API call made, a scenario it
 * took; the clocks, scenarios or new account that an admin call changed),
 * or the whole state after a change of records as a whole (a reset, a
 * restore).
 */
type LogEntry =
  | { write: StoreWrite }
  | {
      state: SandboxData & DurableExtras
      /**
       * The generation whose keys hold the customers and tokens, account by
       * account (`{ns}:g:<gen>:a:<account>`); the state itself holds none.
       * Without it (a log of an earlier version), the state holds them all.
       */
      gen?: string
      /** How many customers and tokens each account of `gen` holds. */
      counts?: Record<string, number>
      /**
       * `2`: each account of `gen` keeps its records and its writes in a
       * list of its own, under its own hash tag (`{ns:account}:g:<gen>`),
       * appended with a compare-and-swap on that list alone, so that a
       * Redis Cluster spreads one sandbox's accounts over its nodes; the
       * state holds no idempotency keys (their accounts' lists do). Without
       * it (a log of an earlier version), the generation's lists share the
       * namespace's tag, and records are written in this log.
       */
      layout?: 2
    }

/** Options of `openRedisStore`. */
export interface RedisStoreOptions {
  /** `redis://[user:password@]host:port[/db]` (or `rediss://`). */
  url: string
  /**
   * What every key begins with (as its hash tag, `{cts}:log`), so that
   * several sandboxes can share one Redis, or spread over a Redis Cluster.
   * @default 'cts'
   */
  namespace?: string
  /**
   * How long the first connection and each command may take, in ms.
   * @default 3000
   */
  timeoutMs?: number
  /** Hears the store's outages and recoveries, one line each. */
  onLog?: (line: string) => void
  /**
   * The most customers and tokens a replica keeps loaded: past it, it lets
   * go of the accounts no request used for longest (Redis keeps them, and
   * the next request of one loads it again).
   * @default 50000
   */
  cacheRecords?: number
  /**
   * The most records (accounts, API keys, customers and tokens) the
   * sandbox holds in all (`limits.records`): counted in Redis as replicas
   * reserve them, a few at a time, so that it holds across the fleet while
   * each account's writes go to its own list.
   */
  maxRecords?: number
  /** The fleet's journal; without it, each replica keeps its own. */
  journal?: JournalOptions
  /**
   * This replica's options, kept as the fleet's when Redis holds none yet;
   * without them, none are kept or read.
   */
  fleet?: FleetOptions
}

/** Options of the fleet's journal in Redis. */
interface JournalOptions {
  /** The most entries kept (`journalLimit`). */
  limit: number
}

/** A running Redis store: the `Store` a server's core writes through, and its lifecycle. */
export interface RedisStore extends Store {
  /** Whether Redis already held this sandbox when this replica opened it. */
  readonly joined: boolean
  /** The fleet's options as Redis keeps them (this replica's when it kept them first), and the key. */
  readonly fleet: { options: FleetOptions; where: string } | undefined
  close(): Promise<void>
}

/** The most log entries one read takes: a long catch-up reads in slices. */
const READ_SLICE = 1000
/** The most records or index entries one command writes. */
const WRITE_SLICE = 1000
/**
 * The most writes the log holds after its last whole state: past them, a
 * state without records (they stay in their generation's keys) replaces
 * them, so that a replica starts by reading that many entries at most.
 */
const MAX_WRITES_BETWEEN_STATES = 10_000
/**
 * How long the records written for a whole state wait for it to be stored;
 * those of a state that lost the race, or whose replica stopped, then go.
 */
const GENERATION_TTL_MS = 120_000
/**
 * How long each account's list written for a whole state waits to be made
 * to last once the state is stored (by its replica, or the next to start or
 * to take the state); one of a state never stored then goes.
 */
const LIST_TTL_MS = 86_400_000
/** How often a replica starts again from a whole state that another dropped as it read. */
const MAX_CATCH_UPS = 5
/** How often the watchdog looks for calls that Redis left unanswered. */
const WATCH_EVERY_MS = 250
/** How often a replica whose cluster sent it round asks again, for health. */
const PROBE_EVERY_MS = 1000
/**
 * How long a replica that took another's whole state waits before it makes
 * sure that the state's lists last (the replica that stored it does so at
 * once, unless it stopped).
 */
const PERSIST_CHECK_MS = 5000
/** How many records of `limits.records` a replica reserves ahead of its need. */
const RESERVE_AHEAD = 64
/** The largest entry read from Redis, in bytes of JSON. */
const MAX_ENTRY_BYTES = 256 * 1024 * 1024

/**
 * Opens the Redis store at `options.url` for one replica: connects (a Redis
 * that cannot be reached within `timeoutMs` is an error naming the URL,
 * never a fall-back to memory), then either appends the replica's freshly
 * seeded state as the log's first entry, when the log is empty, or puts
 * back the state the log holds. Every keyed write is then one
 * compare-and-swap on the log's length: two replicas never both append
 * from the same view, and the one that lost catches up and decides again
 * (`StoreConflict`). Keys share the namespace as hash tag, so a Redis
 * Cluster keeps the log and its counters in one slot; `url` may name any
 * node of a cluster.
 *
 * @example
 * const store = await openRedisStore({ url: 'redis://127.0.0.1:6379/0' }, source)
 * await store.sync()
 */
export async function openRedisStore(
  options: RedisStoreOptions,
  source: StoreSource,
): Promise<RedisStore> {
  const {
    url,
    namespace = 'cts',
    timeoutMs = 3000,
    onLog,
    cacheRecords = 50_000,
  } = options
  const shown = redactUrl(url)
  // @note Every key of a sandbox shares its namespace as hash tag: a Redis
  // Cluster keeps a sandbox in one slot (its scripts touch several keys),
  // and spreads the sandboxes of several namespaces over its nodes.
  const tag = `{${namespace}}`
  const log = `${tag}:log`
  // Where the log's last whole state is: a replica starts reading there.
  const lastState = `${tag}:last-state`
  // How many entries were dropped from the log's front (see APPEND).
  const base = `${tag}:log-base`
  const logKeys = [log, lastState, base]
  // The options every replica of the fleet must share (src/model/fleet-options.ts).
  const fleetKey = `${tag}:options`
  const journalKey = `${tag}:journal`
  const marksKey = `${tag}:journal-marks`
  // The named snapshots: each one's description and data by name, and the
  // names in the order taken.
  const snapshotKeys = {
    infos: `${tag}:snapshots`,
    datas: `${tag}:snapshot-data`,
    order: `${tag}:snapshot-order`,
  }
  const database = checkRedisUrl(url, shown)
  let connected = false
  let fault: StoreFault | undefined
  const client = createClient({
    url,
    // @note Commands fail at once while Redis is away, rather than wait in
    // a queue: the request answers 503 and nothing stale is served.
    disableOfflineQueue: true,
    // @note No timer of the client's own per command: the store's watchdog
    // bounds every call (`bounded`), with one timer for all of them.
    commandOptions: { timeout: 0 },
    socket: {
      connectTimeout: timeoutMs,
      // Never give up once connected; at start, one failure is the answer.
      reconnectStrategy: (retries, cause) =>
        connected ? Math.min(50 * 2 ** Math.min(retries, 5), 1000) : cause,
    },
  })
  const unreachable = (error: Error): void => {
    if (!connected) return
    // @note A password rotated under a running replica fails its next
    // reconnection: said as such, where it read as an unreachable Redis.
    const word = refusedCredentials(error)
    if (word !== undefined) {
      if (fault?.code !== `REDIS_${word}`) {
        onLog?.(
          `The Redis store at ${shown} refused this replica's password (${word}): ${error.message}`,
        )
        fault = {
          code: `REDIS_${word}`,
          message: `Redis at ${shown} refused this replica's password (${describe(error)}); give every replica the password Redis takes.`,
          since: fault?.since ?? new Date().toISOString(),
        }
      }
      return
    }
    if (fault === undefined) {
      onLog?.(`The Redis store at ${shown} is unreachable: ${describe(error)}`)
    }
    fault ??= {
      code: 'REDIS_UNAVAILABLE',
      message: `Redis at ${shown} is unreachable (${describe(error)}).`,
      since: new Date().toISOString(),
    }
  }
  const reachable = (): void => {
    if (fault !== undefined) onLog?.(`The Redis store at ${shown} is back.`)
    fault = undefined
  }
  client.on('error', unreachable)
  client.on('ready', reachable)

  // Whether Redis was found to hold less than this replica applied.
  let lost = false

  // @note A Redis Cluster whose nodes each send the sandbox's slot to
  // another (a resharding left half done, or nodes that disagree) refuses
  // every call after many redirections, none of them run: health says so,
  // in its words, until a call is answered. Health sends none: a probe
  // each second finds when the nodes agree again.
  let misrouted: StoreFault | undefined
  // Whether the store started: a start that failed probes nothing.
  let opened = false
  const probeTheSlot = (): void => {
    void sleep(PROBE_EVERY_MS).then(() => {
      if (misrouted === undefined || !connected || !opened) return
      bounded(logLength).catch(probeTheSlot)
    })
  }
  const lostTheSlot = (error: Error): void => {
    Object.assign(error, { code: 'REDIS_REDIRECTIONS' })
    if (misrouted) return
    probeTheSlot()
    const said = (error.cause as Error | undefined)?.message
    const message = `The Redis Cluster at ${shown} sent this replica from node to node for the sandbox's slot until it gave up${said ? ` (last: ${said})` : ''}: its nodes do not agree on which of them holds the slot (CLUSTER NODES on each says whom it names).`
    onLog?.(message)
    misrouted = {
      code: 'REDIS_REDIRECTIONS',
      message,
      since: new Date().toISOString(),
    }
  }

  // A Redis that keeps its connections but answers nothing (stopped, or
  // behind a partition that drops packets) would hold every request for
  // ever: a store call waits `timeoutMs` at most, and while one is overdue
  // the next fail at once and send nothing, until Redis answers again.
  let overdue: StoreFault | undefined
  const unanswered = (unsettled = false): Error =>
    Object.assign(
      new Error(`Redis at ${shown} answered nothing within ${timeoutMs} ms`),
      // A write sent and not answered may yet be stored.
      { code: 'REDIS_TIMEOUT', unsettled },
    )
  // The calls waiting for Redis, each with the watchdog's tick it began at.
  const waiting = new Set<{
    tick: number
    writes: boolean
    turn: boolean
    steps: boolean
    reject(error: Error): void
  }>()
  // How many changes of the sandbox's own API this replica is deciding and
  // storing (`alone`), during which it applies nothing else.
  let alone = 0
  let ticks = 0
  let watching = false
  // @note One watchdog while calls wait, on the host's own timer (`sleep`):
  // no timer per call, and fake timers in a test neither stop it nor fire
  // it early.
  const watch = (): void => {
    if (watching || waiting.size === 0) return
    watching = true
    void sleep(WATCH_EVERY_MS).then(() => {
      watching = false
      ticks++
      for (const call of waiting) {
        // @note A call that waits for this replica's turn to apply waits
        // for its own change, whose calls of Redis are bounded each: its
        // time starts again, where it would blame a Redis that answers.
        if (call.turn && alone > 0) {
          call.tick = ticks
          continue
        }
        // @note A call of many commands (a whole state's records written in
        // slices, a long log read in slices) waits for each of them, not
        // for all of them at once: its time starts again at each answer,
        // where a hundred thousand records failed a start as if Redis
        // answered nothing.
        if (call.steps) call.tick = Math.max(call.tick, steppedAt)
        // A whole tick more than the timeout: never less than `timeoutMs`.
        if ((ticks - call.tick - 1) * WATCH_EVERY_MS < timeoutMs) continue
        waiting.delete(call)
        // @note Redis answered since this call was sent: it answers, with a
        // backlog (after a stall), and is not marked as answering nothing
        // again, call after call.
        if (overdue === undefined && answeredAt <= call.tick) {
          // At start, the error that ends the start says it.
          if (connected)
            onLog?.(
              `The Redis store at ${shown} answered nothing for ${timeoutMs} ms.`,
            )
          overdue = {
            code: 'REDIS_TIMEOUT',
            message: `Redis at ${shown} answered nothing within ${timeoutMs} ms.`,
            since: new Date().toISOString(),
          }
          // What this copy wrote meanwhile may yet be stored, without the
          // answer that says so: it starts again from what Redis holds.
          lost = true
        }
        call.reject(unanswered(call.writes))
      }
      watch()
    })
  }
  // The watchdog's tick at Redis's last answer.
  let answeredAt = -1
  const answered = (): void => {
    answeredAt = ticks
    if (overdue === undefined) return
    overdue = undefined
    if (connected) onLog?.(`The Redis store at ${shown} answers again.`)
  }
  // The watchdog's tick at the last step of a call of many commands
  // (`steps`): commands sent, or one answered.
  let steppedAt = -1
  /** Passes on the answer of one command of a call of many. */
  const step = <T>(value: T): T => {
    steppedAt = ticks
    answered()
    return value
  }
  const bounded = <T>(
    work: () => Promise<T>,
    { writes = false, turn = false, steps = false } = {},
  ): Promise<T> => {
    if (overdue !== undefined) return Promise.reject(unanswered())
    return new Promise<T>((resolve, reject) => {
      const call = { tick: ticks, writes, turn, steps, reject }
      waiting.add(call)
      watch()
      work().then(
        (value) => {
          if (waiting.delete(call)) resolve(value)
          answered()
          misrouted = undefined
        },
        (error: Error) => {
          if (error instanceof MaxCommandRedirectionsError) lostTheSlot(error)
          // @note Not sent while Redis refuses this replica's password: the
          // 503 names that, where it would blame an unreachable Redis.
          if (
            error instanceof ClientOfflineError &&
            (fault?.code === 'REDIS_WRONGPASS' ||
              fault?.code === 'REDIS_NOAUTH')
          )
            Object.assign(error, { code: fault.code })
          if (waiting.delete(call)) reject(error)
          answered()
        },
      )
    })
  }
  try {
    // @note The client's own timeout covers the TCP connection alone: a
    // Redis that takes it and answers nothing (stopped, a proxy in front of
    // none) would hold the start for ever.
    await bounded(() => client.connect())
  } catch (error) {
    client.destroy()
    throw new Error(connectFailure(error as Error, shown, database), {
      cause: error,
    })
  }
  connected = true

  // The commands the store sends: to the one Redis, or through a cluster
  // client that follows the sandbox's slot to whichever node holds it.
  let redis: Commands = client
  let tagged = (): Promise<typeof client> => Promise.resolve(client)
  // The client that serves, to close: the one Redis's, or the cluster's.
  let serving: Pick<typeof client, 'close' | 'destroy'> = client
  try {
    // @note CLUSTER INFO, not INFO: a user of a managed Redis often lacks
    // the commands ACLs class as dangerous, INFO among them. A Redis that
    // refuses it (cluster support disabled, or not this user's) serves as
    // one node.
    const clustered = await bounded(() =>
      client.sendCommand(['CLUSTER', 'INFO']),
    ).then(
      () => true,
      (error: Error) => {
        if (error instanceof ErrorReply) return false
        throw error
      },
    )
    if (clustered) {
      const cluster = clusterOf(url, timeoutMs)
      serving = cluster
      await bounded(() => cluster.connect()).catch((error: Error) => {
        cluster.destroy()
        throw error
      })
      cluster.on('node-error', unreachable)
      cluster.on('node-ready', reachable)
      redis = cluster
      tagged = () => cluster.getNodeClientForKey(log)
      // The node the URL named was only the way in.
      client.destroy()
    }
  } catch (error) {
    client.destroy()
    throw new Error(
      `Cannot reach the Redis store at ${shown}: ${describe(error as Error)}.`,
      { cause: error },
    )
  }

  // The log's entries this replica has applied (its own among them), the
  // count after the last one another replica wrote, and the order they apply in.
  let seen = 0
  // The mark (`by`) of the entry at `seen - 1`: a log that Redis lost and
  // that grew back as long holds another there.
  let seenMark: string | undefined
  let lastRemote = 0
  // @note Versions count what this replica applied of other replicas'
  // writes, to the sandbox's log and to each account's list alike, so that
  // a write decided before one of them was applied here is decided again.
  let moves = 0
  /** Marks that another replica's write was applied here. */
  const moved = (): number => (lastRemote = ++moves)
  // The place of the last whole state this replica applied or appended.
  let stateAt = 0
  let applying: Promise<void> = Promise.resolve()

  // The generation whose keys hold the customers and tokens (undefined: a
  // log of an earlier version, whose states hold them all), the accounts
  // whose records this replica holds ('all': every one), and how many
  // records each of the others holds in Redis.
  let gen: string | undefined
  let loaded: Set<string> | 'all' = 'all'
  let held = new Map<string, number>()
  const genKey = `${tag}:gen`
  const generation = `${tag}:g:`
  const genKeys = (g: string) => ({
    list: (account: string) => `${generation}${g}:a:${account}`,
    accounts: `${generation}${g}:accounts`,
    tokens: `${generation}${g}:tokens`,
    written: `${generation}${g}:written`,
    /** How many records the generation holds and replicas reserved (`limits.records`). */
    records: `${generation}${g}:records`,
    /** Set once every account's list of a layout-2 generation lasts. */
    persisted: `${generation}${g}:persisted`,
  })
  const isLoaded = (account: string): boolean =>
    loaded === 'all' || loaded.has(account)
  // Generations whose lists under their accounts' own tags are to go.
  const deadGens = `${tag}:dead-gens`
  /**
   * One account's list of generation `g` (layout 2): its records, then its
   * writes, under the account's own hash tag, which a Redis Cluster places
   * apart from the sandbox's log and from other accounts.
   */
  const accountList = (g: string, account: string): string =>
    `{${namespace}:${account}}:g:${g}`
  // Whether the current generation keeps each account's writes in a list of its own (layout 2).
  let sharded = false
  // How many entries of each loaded account's list this replica applied (layout 2).
  const accountSeen = new Map<string, number>()
  // `moves` when another replica's write to the account was last applied here.
  const accountRemote = new Map<string, number>()
  // @note The accounts the log says have a list in the current generation:
  // one of them without it is one Redis lost. Others (an account made
  // through a replica's JavaScript API, which the log never held) have
  // none, and hold nothing in Redis.
  let listed = new Set<string>()
  // The sum of `held`, kept as it changes: an applied write of an account
  // not loaded here adds one, and must not cost a walk over every account.
  let heldSum = 0
  const tellHeld = (): void => source.holdElsewhere(heldSum)
  /** Replaces the counts of records held in Redis alone, all of them. */
  const holdAll = (counts: Iterable<[string, number]>): void => {
    held = new Map(counts)
    heldSum = 0
    for (const count of held.values()) heldSum += count
    tellHeld()
  }
  /** Sets how many records one account holds in Redis alone (none: it is loaded). */
  const holdOne = (account: string, count: number): void => {
    heldSum += count - (held.get(account) ?? 0)
    if (count === 0) held.delete(account)
    else held.set(account, count)
    tellHeld()
  }
  // How many customers and tokens each account of `gen` holds in Redis, as
  // of `seen`: what the log says, loaded here or not. A compaction stores
  // these, never what this copy holds, which counts the records of writes
  // decided and not stored yet.
  let stored = new Map<string, number>()
  /** Starts the counts again from a whole state's. */
  const countState = (entry: Extract<LogEntry, { state: unknown }>): void => {
    stored = new Map(Object.entries(entry.counts ?? {}))
  }
  /** Counts a record that the log now holds. */
  const countStored = (created: CreatedRecord): void => {
    const account = accountOfRecord(created)
    stored.set(account, (stored.get(account) ?? 0) + 1)
  }
  /** Takes the records of a state this replica applied: its generation's, or its own. */
  const adoptGeneration = (
    entry: Extract<LogEntry, { state: unknown }>,
  ): void => {
    gen = entry.gen
    loaded = gen === undefined ? 'all' : new Set()
    holdAll(gen === undefined ? [] : Object.entries(entry.counts ?? {}))
    countState(entry)
    sharded = gen !== undefined && entry.layout === 2
    accountSeen.clear()
    accountRemote.clear()
    listed = new Set(entry.state.accounts.map(({ id }) => id))
    // @note The replica that stored the state makes its lists last; one
    // that stopped halfway would leave them to expire, unless another does.
    if (sharded) {
      const adopted = gen!
      void sleep(PERSIST_CHECK_MS).then(() =>
        bounded(() => ensurePersisted(adopted)).catch(() => {}),
      )
    }
  }
  /** Takes the generation of a whole state this replica stored: it holds every account, each list as it wrote it. */
  const takeOwnGeneration = (state: StateToStore): void => {
    gen = state.entry.gen
    loaded = 'all'
    holdAll([])
    countState(state.entry)
    sharded = state.entry.layout === 2
    accountSeen.clear()
    accountRemote.clear()
    listed = new Set(state.lists?.keys())
    // @note What this replica decided on the records it replaced goes to
    // none of the new generation's lists: decided again, on these.
    moved()
    if (sharded)
      for (const [account, texts] of state.lists ?? [])
        accountSeen.set(account, texts.length)
  }
  /** A write of another replica, without its record when its account is not loaded here (counted instead). */
  const loadedPart = (write: StoreWrite): StoreWrite => {
    const { created, ...rest } = write
    if (created === undefined) return write
    countStored(created)
    const account = accountOfRecord(created)
    if (isLoaded(account)) return write
    holdOne(account, (held.get(account) ?? 0) + 1)
    return rest
  }

  /**
   * Reads entries from `from` on, in slices, stopping at the log's end;
   * `undefined` when the log no longer holds the place `from` (a whole
   * state made it useless, and the replica must start from that state).
   */
  const read = async (
    from: number,
    mark?: string,
  ): Promise<string[] | 'dropped' | 'rewritten'> => {
    const texts: string[] = []
    const keys = [log, base, lastState]
    for (;;) {
      const args = [String(from + texts.length), String(READ_SLICE)]
      const [dropped, length, last, before, ...slice] = (await redis
        .evalSha(scripts.read, { keys, arguments: args })
        .catch(reloadScripts(READ, keys, args))
        .then(step)) as string[]
      // @note Redis lost the log (a flush, a restart without persistence)
      // or holds an older one (a failover to a replica behind): shorter than
      // this replica's place, or its last whole state is not the one this
      // replica followed. Read on, and it would apply another history on
      // top of its own: it starts again from what Redis holds.
      const state = Number(last)
      if (
        Number(length) < from + texts.length ||
        state < stateAt ||
        (state > stateAt && state < from) ||
        // @note As long as this replica's place, and another entry before it:
        // lost, and written again by another replica from its own copy.
        (texts.length === 0 && mark && before && before !== mark)
      )
        return 'rewritten'
      if (from + texts.length < Number(dropped)) return 'dropped'
      texts.push(...slice)
      if (slice.length < READ_SLICE) return texts
    }
  }

  /** The log's length, counting the entries dropped from its front. */
  const logLength = async (): Promise<number> =>
    (await redis
      .evalSha(scripts.length, { keys: [log, base] })
      .catch(reloadScripts(LENGTH, [log, base], []))) as number

  // The append under way: where it begins and what it holds. Until its
  // answer comes, a read may return its entries, which this replica made.
  let inFlight: { from: number; texts: string[] } | undefined

  // The whole state being put back, until its generation is this
  // replica's: a request looks its credential up once it is in.
  let replacing: Promise<void> | undefined
  /** Puts back a whole state another replica stored, and takes its generation. */
  const replaceWith = (
    entry: Extract<LogEntry, { state: unknown }>,
  ): Promise<void> => {
    // @note Unloaded first: a request that asks for an account while the
    // state goes in (its lookup comes between two awaits) would find it
    // loaded, and be answered from none of its records.
    loaded = new Set()
    const putBack = source
      .replace(entry.state)
      .then(() => adoptGeneration(entry))
    replacing = putBack
    return putBack.finally(() => {
      if (replacing === putBack) replacing = undefined
    })
  }

  const applyEntries = async (from: number, texts: string[]) => {
    let at = from
    for (const text of texts) {
      const index = at++
      // Entries this replica applied meanwhile, or wrote itself, are skipped.
      if (index < seen) continue
      if (inFlight && inFlight.texts[index - inFlight.from] === text) {
        if (text.startsWith('{"state":')) stateAt = index
        continue
      }
      const entry = parseEntry(text, index)
      if ('state' in entry) {
        // @note A state in the generation this replica follows is another
        // replica's compaction: what this one applied already, in fewer
        // entries. Taken, it would unload every account for nothing.
        if (entry.gen === undefined || entry.gen !== gen) {
          await replaceWith(entry)
        }
        changes = 0
        writes = 0
        stateAt = index
      } else {
        await source.apply(loadedPart(entry.write))
        const added = entry.write.added?.account?.id
        if (added !== undefined) listed.add(added)
        if (entry.write.added ?? entry.write.set) changes++
        writes++
      }
      seen = at
      seenMark = markOf(text)
      // What this replica decided before now was decided without it.
      moved()
    }
    compactIfDue()
  }

  // Admin changes in the log since its last whole state, as far as this
  // replica has followed it.
  let changes = 0
  // Entries in the log since its last whole state, as far as followed.
  let writes = 0
  let compacting = false
  // @note Admin changes add nothing to the data, so they alone would grow
  // the log without end: past a bound, a whole state makes them useless
  // (and APPEND_STATE drops what came before the previous one). Past a
  // bound of writes too, so that a replica that starts reads few entries:
  // the records stay in their generation's keys.
  const compactIfDue = (): void => {
    if (
      (changes < MAX_CHANGES_BETWEEN_STATES &&
        (gen === undefined || writes < MAX_WRITES_BETWEEN_STATES)) ||
      compacting
    )
      return
    compacting = true
    append({
      ...(gen === undefined ? wholeState() : sharedState(gen)),
      compaction: true,
    })
      // Another replica wrote first: the next change tries again.
      .catch(() => {})
      .finally(() => {
        compacting = false
      })
  }

  // A log that Redis answers and this replica cannot read (a key of the
  // namespace that holds another type, an entry that is not this
  // sandbox's): health says so, in Redis's words, until a read succeeds.
  let unreadable: StoreFault | undefined
  const unreadableLog = (error: Error): never => {
    // @note A read that had to write (the log started again after Redis
    // lost it) and that Redis refused is a refused write, not a bad log.
    if (
      error instanceof ErrorReply &&
      /^(OOM|READONLY|MISCONF)\b/.test(error.message)
    )
      throw refusal(error)
    const bad = (error as { code?: string }).code === 'REDIS_BAD_LOG'
    if (error instanceof ErrorReply || bad) {
      const code = bad ? 'REDIS_BAD_LOG' : replyCode(error)
      unreadable ??= {
        code,
        message: `The Redis store at ${shown} holds what this sandbox cannot read: ${error.message}`,
        since: new Date().toISOString(),
      }
      throw Object.assign(error, { code })
    }
    throw error
  }

  // The read that requests arriving in this turn of the event loop share.
  let nextRead: Promise<void> | undefined

  /**
   * Reads what other replicas appended since this one last looked, and
   * applies it. Requests that arrive in one turn of the event loop share
   * one read, sent after all of them arrived.
   */
  const sync = (): Promise<void> => {
    if (lost) return resync()
    nextRead ??= new Promise<void>((resolve) => process.nextTick(resolve)).then(
      () => {
        nextRead = undefined
        const from = seen
        const reading = read(from, seenMark)
        // @note Awaited once what is being applied is done: refused before
        // then (TRYAGAIN while a resharding moves the slot, Redis gone), it
        // had no handler, and Node ends the process on such a rejection.
        reading.catch(() => {})
        const done = applying
          .then(async () => {
            let at = from
            let texts = await reading
            // @note Sent while the read before was applied: when that one
            // put back a whole state, this place is behind it, and reads as
            // dropped (or rewritten) though nothing new came. Read again
            // from where that left this replica, or the same state would
            // be put back twice, dropping the requests answered from the
            // first.
            if (typeof texts === 'string' && seen !== from) {
              at = seen
              texts = await read(at, seenMark)
            }
            if (texts === 'rewritten') logLost()
            // Left a whole state behind, or Redis lost the log: start again
            // from its last whole state.
            if (typeof texts === 'string') return startFromLastState()
            await applyEntries(at, texts)
            await readStaleAccounts()
          })
          .then(() => {
            unreadable = undefined
          }, unreadableLog)
        applying = done.catch(() => {})
        return done
      },
    )
    return nextRead
  }

  /** Applies the whole log again from its last whole state: after a change that lost the race. */
  const resync = (): Promise<void> => {
    const done = applying.then(startFromLastState)
    applying = done.catch(() => {})
    return done
  }

  /** Runs `work` after what is being applied, before what comes next. */
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => {
    const done = applying.then(work)
    applying = done.then(
      () => {},
      () => {},
    )
    return done
  }

  // The generation one of whose accounts' records Redis lost, and the fault.
  let lostRecords: { gen: string; fault: StoreFault } | undefined

  // Accounts being loaded, each once however many requests ask.
  const loading = new Map<string, Promise<void>>()

  /**
   * Loads the account that `credential` (an API key, or a token) belongs to,
   * unless it is loaded: an API key is this replica's to know, a token's
   * account is in its generation's index. An unknown credential loads
   * nothing, and authentication refuses it.
   */
  const loadAccountOf = async (
    credential: string,
  ): Promise<(() => void) | undefined> => {
    // @note Not in the data that a whole state being put back is filling:
    // a credential not in it yet would load nothing, and its request
    // would be answered from none of its account's records once it is.
    for (let put = replacing; put !== undefined; put = replacing)
      await put.catch(() => {})
    const account = source.accountOf(credential) ?? (await lookUp(credential))
    if (account === undefined) return undefined
    // Held before it is loaded: no eviction drops it under the request.
    const release = hold(account)
    if (isLoaded(account)) {
      // @note A token that another replica minted since this one read the
      // account is in its list, not yet here.
      const current = gen
      if (sharded && current !== undefined && !source.accountOf(credential))
        await inTurn(() => readAccountTail(account, current)).catch(
          (error: Error) => {
            release()
            throw error
          },
        )
      return release
    }
    let pending = loading.get(account)
    if (pending === undefined) {
      const named = account
      pending = inTurn(() => loadNow(named)).finally(() =>
        loading.delete(named),
      )
      loading.set(account, pending)
    }
    await pending.catch((error: Error) => {
      release()
      throw error
    })
    return release
  }

  /**
   * The account of a token that no loaded account holds, from the current
   * generation's index; `undefined` for a token it does not hold. An index
   * gone from a generation whose accounts keep lists of their own (which
   * begins its index) is an error, as a lost list is: refused, every token
   * would read as unknown.
   */
  const lookUp = async (credential: string): Promise<string | undefined> => {
    for (let attempt = 1; ; attempt++) {
      // @note A replica that holds every account holds every token, unless
      // each account keeps its own list, to which others append.
      if ((loaded === 'all' && !sharded) || gen === undefined) return undefined
      const current = gen
      const index = genKeys(current).tokens
      const keys = [genKey, index]
      const args = [current, secretDigest(credential)]
      const [said, account, , begun] = (await bounded(() =>
        redis
          .evalSha(scripts.lookup, { keys, arguments: args })
          .catch(reloadScripts(LOOKUP, keys, args)),
      )) as string[]
      if (said === 'ok' && gen === current) {
        if (account) return account
        if (sharded && begun === '0') {
          loseRecords(
            current,
            `The Redis store at ${shown} lost the index of its tokens: its key ${index} is gone, where every generation keeps one from its start (a key of the namespace deleted by hand?), so a token of an account this replica has not loaded cannot be found.`,
          )
        }
        return undefined
      }
      if (attempt >= MAX_CATCH_UPS) {
        throw new Error(
          `The Redis store's log at ${shown} moved on ${MAX_CATCH_UPS} times while this replica looked a token up.`,
        )
      }
      // Another generation is current (a reset): take it, and look again.
      await regainGeneration()
      await bounded(sync, { turn: true, steps: true })
      const found = source.accountOf(credential)
      if (found !== undefined) return found
    }
  }

  /**
   * Sets `{ns}:gen` again from the log's last whole state if it is gone (a
   * DEL by hand): each script that checks a generation reads it, and
   * without it read every write as decided on a generation left, to be
   * decided again, without end. Called where one did.
   */
  const regainGeneration = (): Promise<unknown> =>
    redis
      .eval(REGAIN_GEN, { keys: [genKey, log, lastState, base] })
      .catch(() => {})

  /**
   * Says that Redis lost records of the generation `current`, which the
   * log counts: health says so until another generation is current (a
   * reset, a restore), and the request is refused.
   */
  const loseRecords = (current: string, message: string): never => {
    throw recordsLost(current, message)
  }
  /** `loseRecords`' error, for a batch of writes to be refused with. */
  const recordsLost = (current: string, message: string): Error => {
    lostRecords = {
      gen: current,
      fault: {
        code: 'REDIS_LOST_RECORDS',
        message,
        since: new Date().toISOString(),
      },
    }
    return Object.assign(new Error(message), { code: 'REDIS_LOST_RECORDS' })
  }
  /** What Redis lost when an account's list is gone while its generation is current. */
  const listGone = (account: string, list: string): string =>
    `The Redis store at ${shown} lost the records of the account ${account}: its key ${list} is gone, where the log says the account exists (a key of the namespace deleted by hand?).`

  // Requests under way by account, and the calls that hold every account:
  // what they read stays loaded until they are answered.
  const inUse = new Map<string, number>()
  let wholeInUse = 0
  // Accounts by their last request, the longest unused first.
  const used = new Set<string>()
  // The account of the last request, which no eviction lets go of.
  let lastUsed: string | undefined
  const hold = (account: string): (() => void) => {
    inUse.set(account, (inUse.get(account) ?? 0) + 1)
    used.delete(account)
    used.add(account)
    lastUsed = account
    let released = false
    return () => {
      if (released) return
      released = true
      const left = inUse.get(account)! - 1
      if (left > 0) inUse.set(account, left)
      else inUse.delete(account)
      evictIfDue()
    }
  }

  let evicting = false
  /**
   * Lets go of the records of the accounts that no request used for
   * longest, none under way and never the last one used, until this copy
   * holds `cacheRecords` at most.
   */
  const evictIfDue = (): void => {
    if (evicting || wholeInUse > 0 || gen === undefined) return
    if (source.heldRecords() <= cacheRecords) return
    evicting = true
    inTurn(async () => {
      if (wholeInUse > 0 || gen === undefined) return
      if (loaded === 'all') loaded = new Set(source.accountIds())
      const accounts = loaded
      const order = [
        ...[...accounts].filter((account) => !used.has(account)),
        ...[...used].filter((account) => accounts.has(account)),
      ]
      for (const account of order) {
        if (source.heldRecords() <= cacheRecords) break
        // @note An account larger than `cacheRecords` alone, let go of
        // whenever no request held it for a moment, was loaded whole again
        // by the next: a replica under load spent its time reloading it.
        if (inUse.has(account) || account === lastUsed) continue
        const count = source.heldRecords(account)
        if (count === 0) continue
        // @note Unloaded before its records go: a request that asks for it
        // while they go (its hold comes between two awaits here) loads it
        // again after this turn, where it would be served without them.
        accounts.delete(account)
        used.delete(account)
        accountSeen.delete(account)
        accountRemote.delete(account)
        holdOne(account, count)
        await source.evict(account)
      }
    })
      .catch(() => {})
      .finally(() => {
        evicting = false
      })
  }

  /**
   * Loads one account's list of generation `current` (layout 2): `false`
   * when another generation became current meanwhile (to load again). A
   * list gone while its generation is current and names the account is one
   * that Redis lost.
   */
  const loadList = async (
    account: string,
    current: string,
    prefetched?: string[],
  ): Promise<boolean> => {
    const list = accountList(current, account)
    const reply = prefetched ?? (await bounded(() => readList(list, 0)))
    if (reply[0] === '0' && !listed.has(account)) {
      if (loaded !== 'all') loaded.add(account)
      return true
    }
    if (reply[0] === '0') {
      // A reset or a restore may have left the generation: read the log.
      const since = seen
      const texts = await bounded(() => read(since))
      if (texts === 'rewritten') lost = true
      if (typeof texts === 'string') await startFromLastState()
      else await applyEntries(since, texts)
      if (gen !== current || isLoaded(account)) return gen !== current
      // @note An account with no list in its generation: one that no
      // state or admin call of this version made (the log holds it, and
      // Redis lost the list), or an id no account has.
      if (listed.has(account)) loseRecords(current, listGone(account, list))
      return true
    }
    if (gen !== current || isLoaded(account)) return gen !== current
    await applyAccountEntries(account, 0, reply.slice(1))
    if (gen !== current) return false
    if (loaded !== 'all') loaded.add(account)
    holdOne(account, 0)
    return true
  }

  /**
   * Loads every account's list of generation `current` (layout 2), and
   * reads on those loaded from where this replica left them: `false` when
   * another generation became current meanwhile. A slice of accounts is
   * read together (one wait for many lists), and applied in turn.
   */
  const readEveryList = async (current: string): Promise<boolean> => {
    const accounts = source.accountIds()
    for (let at = 0; at < accounts.length; at += READ_SLICE) {
      const slice = accounts.slice(at, at + READ_SLICE)
      const froms = slice.map((account) =>
        isLoaded(account) ? (accountSeen.get(account) ?? 1) : 0,
      )
      const replies = await bounded(
        () =>
          Promise.all(
            slice.map((account, i) =>
              readList(accountList(current, account), froms[i]!).then(step),
            ),
          ),
        { steps: true },
      )
      for (const [i, account] of slice.entries()) {
        if (gen !== current) return false
        if (froms[i]! > 0)
          await readAccountTail(account, current, replies[i], froms[i])
        else if (!isLoaded(account))
          await loadList(account, current, replies[i])
      }
    }
    return gen === current
  }

  /** Loads every account that holds records, until none is left out. */
  const loadEvery = async (): Promise<void> => {
    for (let round = 1; ; round++) {
      const current = gen
      if (!sharded || current === undefined) break
      if (await readEveryList(current)) {
        loaded = 'all'
        return
      }
      if (round >= MAX_CATCH_UPS)
        throw new Error(
          `The Redis store at ${shown} moved on ${MAX_CATCH_UPS} times while this replica loaded every account.`,
        )
    }
    for (let round = 1; loaded !== 'all'; round++) {
      for (const account of held.keys()) await loadNow(account)
      // Every account not loaded holds nothing: the rest are loaded.
      if (held.size === 0) loaded = 'all'
      else if (round >= MAX_CATCH_UPS)
        throw new Error(
          `The Redis store at ${shown} kept adding accounts while this replica loaded them all.`,
        )
    }
  }

  /**
   * Reads one account's records with the entries that came after this
   * replica's place, as of one moment, and applies both: the entries first
   * (the account's records among them are in its list already), then the
   * records. In the order of applying.
   */
  const loadNow = async (account: string): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      if (isLoaded(account) || gen === undefined) return
      const current = gen
      if (sharded) {
        if (await loadList(account, current)) return
        if (attempt >= MAX_CATCH_UPS) {
          throw new Error(
            `The Redis store's log at ${shown} moved on ${MAX_CATCH_UPS} times while this replica loaded the records of the account ${account}.`,
          )
        }
        continue
      }
      const keys = [
        log,
        base,
        lastState,
        genKey,
        genKeys(current).list(account),
      ]
      // @note The place the entries begin at, kept: an append of this
      // replica that settles meanwhile moves `seen` past its own entry,
      // which the reply holds all the same.
      const from = seen
      const args = [String(from), current, String(READ_SLICE)]
      const reply = (await bounded(() =>
        redis
          .evalSha(scripts.load, { keys, arguments: args })
          .catch(reloadScripts(LOAD, keys, args)),
      )) as string[]
      if (reply[0] === 'ok') {
        const count = Number(reply[1])
        await applyEntries(from, reply.slice(3, 3 + count))
        // A state among them began another generation: again.
        if (gen !== current || isLoaded(account)) continue
        // @note Gone while the log counts records in it: deleted by hand,
        // and loaded as empty it would serve the account from none of them.
        const counted = held.get(account) ?? 0
        if (reply[2] === '0' && counted > 0) {
          loseRecords(
            current,
            `The Redis store at ${shown} lost the records of the account ${account}: its key ${keys[4]} is gone, where the log says it holds ${counted} of the account's customers and tokens (a key of the namespace deleted by hand?).`,
          )
        }
        await source.insert(
          reply
            .slice(3 + count)
            .map((text, at) => parseRecord(text, account, at)),
        )
        if (loaded !== 'all') loaded.add(account)
        holdOne(account, 0)
        return
      }
      if (attempt >= MAX_CATCH_UPS) {
        throw new Error(
          `The Redis store's log at ${shown} moved on ${MAX_CATCH_UPS} times while this replica loaded the records of the account ${account}.`,
        )
      }
      // Behind the log, or on a generation it left: catch up first.
      const since = seen
      const texts = await bounded(() => read(since))
      if (texts === 'rewritten') lost = true
      if (typeof texts === 'string') await startFromLastState()
      else await applyEntries(since, texts)
    }
  }

  /**
   * Where a replica that found the log empty begins it again: the
   * generation `{ns}:gen` names, or with that key deleted too the one this
   * replica follows, if its keys are whole and of this layout (written, and
   * a token index that begins with its first field), whose lists hold every
   * record; `'behind'` when this replica follows a generation a whole state
   * left since (that one's keys are gone, while Redis kept the fleet's
   * options: it lost keys, not everything); `undefined` when Redis holds
   * no generation (new, or it lost everything).
   */
  const lostLogGeneration = async (): Promise<
    string | 'behind' | undefined
  > => {
    const named = await redis.get(genKey)
    const candidate = named ?? gen
    if (candidate === undefined) return undefined
    const keys = genKeys(candidate)
    const [written, first] = await Promise.all([
      redis.get(keys.written),
      redis.hGet(keys.tokens, ''),
    ])
    if (written !== null && first !== null)
      return gen === undefined || gen === candidate ? candidate : 'behind'
    if (
      named === null &&
      gen !== undefined &&
      (await redis.get(fleetKey)) !== null
    )
      return 'behind'
    return undefined
  }

  /**
   * The refusal of a replica that found the log lost and follows a
   * generation a whole state left since: its copy, of before that state,
   * must not begin the log again (it would bring back what a reset
   * removed, or drop what came since). A replica that followed the latest
   * state does, when it next serves; a replica started anew does too.
   */
  const behindLostLog = (): Error =>
    new Error(
      `The Redis store at ${shown} lost its log, and this replica's copy is of a generation a reset or a restore left since: it does not begin the log again from it. A replica that followed the latest state does when it next serves a request; so does a replica started again.`,
    )

  /**
   * Says which accounts of the generation `g` this replica's copy, which
   * began a lost log again, does not hold: added since it last read the
   * log, they were lost with it, and their records are out of reach.
   */
  const sayAccountsLeftOut = async (g: string): Promise<void> => {
    const known = new Set(source.accountIds())
    const left = (await redis.sMembers(genKeys(g).accounts)).filter(
      (account) => !known.has(account),
    )
    if (left.length === 0) return
    onLog?.(
      `The Redis store at ${shown} lost its log, which this replica began again from its copy: ${left.length} account(s) added since it last read the log (${left.slice(0, 5).join(', ')}${left.length > 5 ? ', …' : ''}) are not in it, so their API keys are lost, and their records stay in Redis, out of reach, until the next reset or restore.`,
    )
  }

  /** Redis lost the fleet's options with its log: kept again. */
  const keepFleet = async (): Promise<void> => {
    if (!options.fleet) return
    const kept = JSON.stringify(options.fleet)
    await redis
      .eval(JOIN, { keys: [fleetKey, log, base], arguments: [kept, kept] })
      .catch(() => {})
  }

  /** What `resync` does, in the order of applying. */
  // Whether this replica's own state began the log, rather than the state
  // Redis held (another replica's, or one from before a restart).
  let founded = false
  const startFromLastState = async (): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      const length = await logLength()
      if (length === 0) {
        // An empty log (a new Redis, or one that lost it): this replica's
        // state is the first entry, unless another's got there first.
        // @note Redis may have lost the log alone (a DEL by hand) and kept
        // the generation it named, whole: its accounts' lists hold every
        // record, those this replica never read included. The new log
        // keeps that generation, with this replica's copy of the rest
        // (accounts, keys, clocks); a new one would drop its lists.
        const kept = await lostLogGeneration()
        if (kept === 'behind') throw behindLostLog()
        if (kept !== undefined) {
          const state = sharedState(kept)
          state.entry.counts = Object.fromEntries(stored)
          const text = logText(state.entry, `${origin}:${++appended}`)
          // Stored or not, the log is read again as any replica reads it.
          if ((await appendState(0, text, state)) === 1) {
            await keepFleet()
            await sayAccountsLeftOut(kept)
          } else if (attempt >= MAX_CATCH_UPS) {
            throw new Error(
              `The Redis store's log at ${shown} was lost ${MAX_CATCH_UPS} times while this replica began it again.`,
            )
          }
          continue
        }
        const state = wholeState({ partial: true })
        const text = logText(state.entry, `${origin}:${++appended}`)
        const first = await appendState(0, text, state)
        if (first === 1) {
          seen = 1
          seenMark = markOf(text)
          refused = undefined
          stateAt = 0
          lossSaid = false
          takeOwnGeneration(state)
          // A new log: nothing this replica decides now is late.
          moved()
          lost = false
          founded = true
          await keepFleet()
          return
        }
      }
      // The last whole state and what follows it are all that count.
      // @note A mark deleted by hand (DEL of its key) is found again: the
      // newest whole state of a log this sandbox wrote.
      const marked =
        (await redis.get(lastState)) ??
        ((await redis.eval(REMARK, { keys: [log, lastState, base] })) as
          string | null)
      // @note Every log this sandbox writes begins with a whole state and
      // marks it: a log without one was written by something else, which
      // no number of reads mends. Its first entry says what it is.
      if (marked === null) {
        const [first] = await redis.lRange(log, 0, 0)
        if (first !== undefined) parseEntry(first, 0)
        throw badLog(
          `The Redis store's log at ${shown} holds entries without the mark of its last whole state (${lastState}); the key holds something else. Remove the namespace's keys, or use another namespace.`,
        )
      }
      const start = Number(marked)
      const from =
        Number.isInteger(start) && start >= 0 && start < length ? start : 0
      // Follows the log from its last whole state, whatever came before.
      stateAt = from
      const texts = await read(from)
      // Another whole state came meanwhile and dropped this one: again.
      if (typeof texts === 'string') {
        if (attempt < MAX_CATCH_UPS) continue
        throw new Error(
          `The Redis store's log at ${shown} moved on ${MAX_CATCH_UPS} times while this replica read it, or its last whole state (${lastState}) names an entry it no longer holds.`,
        )
      }
      seen = from
      lost = false
      lossSaid = false
      // What Redis holds, whatever this copy holds: its state is applied.
      gen = undefined
      await applyEntries(from, texts)
      moved()
      return
    }
  }

  /** A whole state to append, with the records it keeps apart. */
  interface StateToStore {
    entry: Extract<LogEntry, { state: unknown }>
    /** Each account's records, as JSON, for a new generation's keys. */
    lists?: Map<string, string[]>
    /** Each token's digest and account, for a new generation's index. */
    tokens?: [digest: string, account: string][]
    /** How many records (accounts, API keys, customers, tokens) it holds. */
    records?: number
    /**
     * Whether its counts are the log's where it is appended, filled in as
     * it is sent (a compaction, whose records stay where they are).
     */
    counted?: boolean
    /**
     * What this copy holds already, in fewer entries: refused, this copy
     * keeps nothing Redis lacks, and putting back the whole state would
     * unload every account for nothing.
     */
    compaction?: boolean
  }

  /**
   * The whole state with its records apart, in a new generation: for a
   * state that changed them, which this replica holds whole: it replaced
   * them (a reset, a restore), or loaded every account first (an edit).
   */
  const wholeState = ({ partial = false } = {}): StateToStore => {
    if (loaded !== 'all' && !partial) {
      throw new Error(
        'A whole state was to be stored from a replica that holds only some accounts; nothing was stored.',
      )
    }
    const dumped = source.dump()
    const g = globalThis.crypto.randomUUID()
    // Every account has a list, which begins by naming it: an append to
    // one that is gone (its generation left) is refused, never made anew.
    const lists = new Map<string, string[]>()
    const listOf = (account: string): string[] => {
      let list = lists.get(account)
      if (list === undefined) {
        list = [JSON.stringify({ header: { account, gen: g } })]
        lists.set(account, list)
      }
      return list
    }
    for (const { id } of dumped.accounts) listOf(id)
    const counts: Record<string, number> = {}
    const keep = (account: string, text: string): void => {
      listOf(account).push(text)
      counts[account] = (counts[account] ?? 0) + 1
    }
    for (const customer of dumped.customers)
      keep(customer.account_id, JSON.stringify({ customer }))
    const tokens: [string, string][] = []
    for (const token of dumped.tokens) {
      keep(token.account_id, JSON.stringify({ token }))
      tokens.push([secretDigest(token.secret), token.account_id])
    }
    // An account's answered keys are its writes, after its records.
    for (const idempotencyKey of dumped.idempotency_keys)
      listOf(idempotencyKey.account).push(
        JSON.stringify({ write: { idempotencyKey } }),
      )
    return {
      entry: {
        state: { ...dumped, customers: [], tokens: [], idempotency_keys: [] },
        gen: g,
        counts,
        layout: 2,
      },
      lists,
      tokens,
      records:
        dumped.accounts.length +
        dumped.api_keys.length +
        dumped.customers.length +
        dumped.tokens.length,
    }
  }

  /**
   * `wholeState`, once this replica's own writes to accounts' lists that
   * were decided before it are settled: each stored, or refused and taken
   * back. A record whose write is under way would be in the state, and so in
   * the new generation, while its write, refused there as decided in the
   * generation before, is taken back and decided again: a record no call
   * was answered 201 for (the fleet's property test found it, beside an
   * admin call that stored the whole state).
   */
  const settledWholeState = async (partial: boolean): Promise<StateToStore> => {
    for (let round = 1; ; round++) {
      // @note A call's record is in memory a few microtasks before its
      // write is queued: a macrotask later, the write of each one is.
      await new Promise((resolve) => setTimeout(resolve, 0))
      await Promise.allSettled(
        [...accountQueues.values()].map((queue) => queue.flushing),
      )
      if (accountQueues.size === 0 || round >= MAX_CATCH_UPS) {
        holdWrites()
        return wholeState({ partial })
      }
    }
  }

  // @note While this replica stores a whole state of its own, writes to
  // accounts' lists wait: one decided on the data the state holds, after
  // it was taken, would go to the lists of the generation it leaves, and
  // be in no list of its own. Once the state is stored (or not), they go
  // on: refused there as decided in the generation before, and decided
  // again.
  let holding = 0
  let writesHeld: Promise<void> = Promise.resolve()
  let releaseHeld = (): void => {}
  const holdWrites = (): void => {
    if (holding++ === 0)
      writesHeld = new Promise((resolve) => (releaseHeld = resolve))
  }
  const writesHeldNow = (): boolean => holding > 0
  const releaseWrites = (): void => {
    if (--holding === 0) releaseHeld()
  }

  /** The state without its records, which stay in the generation `current`: a compaction. */
  const sharedState = (current: string): StateToStore => {
    const state = source.dumpShared()
    return {
      entry: sharded
        ? { state: { ...state, idempotency_keys: [] }, gen: current, layout: 2 }
        : { state, gen: current },
      counted: true,
    }
  }

  /** Adds `items` to the key with `command` and sets its expiry, in one command. */
  const addExpiring = (
    command: 'RPUSH' | 'SADD' | 'HSET',
    key: string,
    items: string[],
    ttlMs = GENERATION_TTL_MS,
  ): Promise<unknown> => {
    const args = [String(ttlMs), command, ...items]
    return redis
      .evalSha(scripts.addExpiring, { keys: [key], arguments: args })
      .catch(reloadScripts(ADD_EXPIRING, [key], args))
      .then(step)
  }

  /** Writes a new generation's keys, each to expire unless its state is stored. */
  const writeGeneration = async (
    g: string,
    lists: Map<string, string[]>,
    tokens: [string, string][],
    records: number | undefined,
  ): Promise<void> => {
    const keys = genKeys(g)
    const expiry = {
      expiration: { type: 'PX', value: GENERATION_TTL_MS },
    } as const
    // Their time starts now, not when the state was made (a long dump).
    steppedAt = ticks
    // @note Each slice with its expiry: a replica killed (or cut off)
    // between a push and a later PEXPIRE left its records for good.
    const sends: Promise<unknown>[] = []
    for (const [account, texts] of lists) {
      const list = accountList(g, account)
      // @note Under other tags than the state's script reaches, they are
      // made to last after it: until then they wait a day, not minutes, so
      // that a replica stopped between the two leaves them to the next start.
      for (let at = 0; at < texts.length; at += WRITE_SLICE)
        sends.push(
          addExpiring(
            'RPUSH',
            list,
            texts.slice(at, at + WRITE_SLICE),
            LIST_TTL_MS,
          ),
        )
    }
    const accounts = [...lists.keys()]
    for (let at = 0; at < accounts.length; at += WRITE_SLICE)
      sends.push(
        addExpiring(
          'SADD',
          keys.accounts,
          accounts.slice(at, at + WRITE_SLICE),
        ),
      )
    // @note The index of a generation whose accounts keep their own lists
    // holds one field that no digest is, from the start: gone, Redis lost
    // it, where the log no longer counts the tokens other replicas made.
    const indexed: [string, string][] = [['', ''], ...tokens]
    for (let at = 0; at < indexed.length; at += WRITE_SLICE)
      sends.push(
        addExpiring(
          'HSET',
          keys.tokens,
          indexed.slice(at, at + WRITE_SLICE).flat(),
        ),
      )
    if (records !== undefined)
      sends.push(redis.set(keys.records, String(records), expiry))
    // Last: a state appended finds it only once the rest is written.
    sends.push(redis.set(keys.written, '1', expiry))
    await Promise.all(sends)
  }

  /**
   * Writes `state`'s generation when it is new, then appends it at `at`
   * (`'end'`: wherever the log ends; with `pastRecords`, wherever it ends
   * unless an entry after `at` changed the scenarios): the new length, or
   * -1 - the length. `sending` is told just before the append goes out.
   */
  const appendState = async (
    at: number | 'end',
    text: string,
    state: StateToStore,
    pastRecords = false,
    sending?: () => void,
  ): Promise<number> => {
    const g = state.entry.gen ?? ''
    if (state.lists)
      await writeGeneration(g, state.lists, state.tokens ?? [], state.records)
    const keys = genKeys(g)
    const stateKeys = [
      log,
      lastState,
      base,
      genKey,
      keys.accounts,
      keys.tokens,
      keys.written,
      deadGens,
      keys.records,
    ]
    const args = [
      at === 'end' ? '' : String(at),
      text,
      g,
      generation,
      pastRecords ? '1' : '',
      // @note The generation this replica follows, which the state leaves:
      // dropped by the script even if its key was deleted by hand.
      gen ?? '',
    ]
    sending?.()
    const length = (await redis
      .evalSha(scripts.appendState, { keys: stateKeys, arguments: args })
      .catch(reloadScripts(APPEND_STATE, stateKeys, args))) as number
    // @note Refused, a new generation is never current: its lists, which
    // wait a day under their accounts' own tags, go now (replicas that
    // race to begin a lost log each wrote a whole copy); its keys in the
    // sandbox's slot expire on their own.
    if (length < 0 && state.lists && g !== gen)
      void dropLists(g, [...state.lists.keys()]).catch(() => {})
    if (length > 0 && state.lists && state.entry.layout === 2) {
      // @note Stored, the state's lists are made to last before it is
      // answered: they sit under their accounts' own tags, which its script
      // cannot reach. Refused (a slot that moves, Redis gone a moment), the
      // state is stored all the same, and they are made to last later
      // (they wait a day).
      const accounts = [...state.lists.keys()]
      await persistLists(g, accounts).catch(() => {
        void sleep(PERSIST_CHECK_MS).then(() =>
          bounded(() => ensurePersisted(g)).catch(() => {}),
        )
      })
      void bounded(dropDeadGenerations, { steps: true }).catch(() => {})
    }
    return length
  }

  /** Makes the lists of generation `g`'s accounts last, then marks it so. */
  const persistLists = async (g: string, accounts: string[]): Promise<void> => {
    for (let at = 0; at < accounts.length; at += WRITE_SLICE)
      await Promise.all(
        accounts
          .slice(at, at + WRITE_SLICE)
          .map((account) => redis.persist(accountList(g, account)).then(step)),
      )
    const keys = [genKey, genKeys(g).persisted]
    await redis.eval(MARK_PERSISTED, { keys, arguments: [g] })
  }

  /** Makes the lists of generation `g` last, unless a replica did: the one that stored it may have stopped halfway. */
  const ensurePersisted = async (g: string): Promise<void> => {
    if (gen !== g || (await redis.get(genKeys(g).persisted)) !== null) return
    await persistLists(g, await redis.sMembers(genKeys(g).accounts))
  }

  /**
   * Drops the lists of the generations a whole state left (APPEND_STATE
   * names them in `deadGens`), account by account, then the set that named
   * them: a replica that stops halfway leaves the rest to the next state.
   */
  const dropDeadGenerations = async (): Promise<void> => {
    for (const g of await redis.sMembers(deadGens)) {
      const keys = genKeys(g)
      await dropLists(g, await redis.sMembers(keys.accounts))
      await redis.del([keys.accounts, keys.persisted])
      await redis.sRem(deadGens, g)
    }
  }

  /** Deletes the lists of `accounts` in the generation `g`, a slice at a time. */
  const dropLists = async (g: string, accounts: string[]): Promise<void> => {
    for (let at = 0; at < accounts.length; at += WRITE_SLICE)
      await Promise.all(
        accounts
          .slice(at, at + WRITE_SLICE)
          .map((account) => redis.del(accountList(g, account)).then(step)),
      )
  }

  interface Pending {
    text: string
    /** The write, for the record it keeps in its account's list. */
    write?: StoreWrite
    /** The whole state, appended alone. */
    state?: StateToStore
    /**
     * How much of the log before it the state makes useless, appended
     * wherever the log ends: `'all'` (a reset), or `'records'` (a restore,
     * which kept the scenarios: not past an entry that changed them).
     */
    replaced?: Replaced
    undo: (() => void) | undefined
    /** Whether the change stays in this copy when it is not stored (nothing takes it back). */
    kept: boolean
    decidedAt: number
    resolve(): void
    reject(error: Error): void
  }
  // Who appends (this replica, for as long as it runs) and how often so far.
  const origin = globalThis.crypto.randomUUID().slice(0, 8)
  let appended = 0
  // Writes waiting for the append under way; they go together next.
  const logQueue = writeQueue<Pending>((batch) => flush(batch))

  /**
   * Appends a write or a whole state, decided on this replica's view at
   * `decidedAt` (its count of applied entries then). Writes decided while
   * an append is under way go together in the next one (group commit),
   * under one compare-and-swap: the log must hold exactly what this replica
   * applied. A whole state goes alone.
   */
  const append = (
    entry: { write: StoreWrite } | StateToStore,
    undo?: () => void,
    decidedAt = moves,
    replaced?: Replaced,
  ): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const logged = 'write' in entry ? entry : entry.entry
      logQueue.add({
        // @note Marked with this replica and a count, so that a read can
        // tell this replica's entries from another's that say the same.
        text: logText(logged, `${origin}:${++appended}`),
        ...('write' in entry ? { write: entry.write } : { state: entry }),
        undo,
        kept:
          'write' in entry
            ? entry.write.added !== undefined || entry.write.set !== undefined
            : !entry.compaction,
        decidedAt,
        replaced,
        resolve,
        reject,
      })
    })

  // Redis that answers and refuses to store (out of memory under
  // `maxmemory`, a read-only replica, a failing disk): every write fails
  // until one is taken, as the data file's do on a full disk.
  let refused: StoreFault | undefined
  const refusal = (error: Error): Error => {
    if (!(error instanceof ErrorReply)) return error
    const code = replyCode(error)
    refused ??= {
      code,
      message: `Redis at ${shown} refused the write: ${error.message}`,
      since: new Date().toISOString(),
    }
    return Object.assign(error, { code })
  }

  const refuse = (pending: Pending[], error: Error): void => {
    // @note A change this copy keeps though it was not stored (a whole
    // state) would differ from the fleet's: the next sync puts back what
    // Redis holds. Also when another replica outran it: the catch-up that
    // follows may fail (Redis gone a moment), and this copy then applied
    // the others' writes on top of a reset Redis never stored. One with an
    // undo (an admin change) is taken back here, and catching up is
    // enough: putting back the whole state dropped every request this
    // replica was answering.
    if (pending.some((p) => p.kept && p.undo === undefined)) lost = true
    for (const { undo } of pending) undo?.()
    for (const { reject } of pending) reject(error)
  }

  const settle = (ready: Pending[], length: number): void => {
    if (ready[0]?.replaced && length > 0) {
      settleReplaced(ready[0], length)
      return
    }
    if (length < 0) {
      // Shorter than what this replica applied: Redis lost the log (a
      // restart without persistence, a flush). Start it again from here.
      if (-1 - length < seen) logLost()
      refuse(ready, new StoreConflict())
      return
    }
    // A read may have applied other replicas' entries after these already.
    if (length >= seen) seenMark = markOf(ready.at(-1)!.text)
    seen = Math.max(seen, length)
    for (const [at, { state, kept, write }] of ready.entries()) {
      if (state) {
        followOwnState(state, length - ready.length + at)
      } else {
        writes++
        if (kept) changes++
        if (write?.created) countStored(write.created)
      }
    }
    for (const { resolve } of ready) resolve()
    compactIfDue()
  }

  /**
   * Takes a state appended wherever the log ended, now `length` entries
   * long: the entries other replicas appended before it, which this replica
   * has not applied, are useless.
   */
  const settleReplaced = (
    { state, text, resolve }: Pending,
    length: number,
  ): void => {
    // Shorter than what this replica applied: Redis lost the log, and this
    // state began it again.
    if (length - 1 < seen) logLost()
    // @note Writes of this replica decided before the entries it skips
    // are decided again, on the new state.
    else if (length - 1 > seen) moved()
    seen = length
    seenMark = markOf(text)
    followOwnState(state!, length - 1)
    resolve()
  }

  /** Follows the log from this replica's own whole state, stored at `at`. */
  const followOwnState = (state: StateToStore, at: number): void => {
    changes = 0
    writes = 0
    stateAt = at
    // A new generation holds what this replica holds: every account.
    if (state.lists) takeOwnGeneration(state)
  }

  /** The ARGV and KEYS that keep each record of `ready` in its account's list of the current generation. */
  const recordsOf = (ready: Pending[]): { keys: string[]; args: string[] } => {
    const keys: string[] = []
    const args: string[] = []
    if (gen === undefined) return { keys, args }
    const { list } = genKeys(gen)
    for (const { write } of ready) {
      const created = write?.created
      if (created === undefined) continue
      const account = accountOfRecord(created)
      keys.push(list(account))
      args.push(
        JSON.stringify(created),
        'token' in created ? secretDigest(created.token.secret) : '',
        account,
      )
    }
    return { keys, args }
  }

  /** A write to one account's list (layout 2), waiting to be appended. */
  interface AccountPending {
    /** The generation it was decided in, whose list alone may take it. */
    gen: string | undefined
    text: string
    write: StoreWrite
    undo: (() => void) | undefined
    decidedAt: number
    resolve(): void
    reject(error: Error): void
  }
  // Each account's writes waiting for its append under way; they go
  // together next. An account's queue goes once none waits or is sent.
  const accountQueues = new Map<string, WriteQueue<AccountPending>>()
  // Each account's append under way: where it begins and what it holds.
  const accountInFlight = new Map<string, { from: number; texts: string[] }>()

  /** The account whose list keeps `write` (layout 2); none for a write of the sandbox's log. */
  const accountOfWrite = (write: StoreWrite): string | undefined => {
    if (!sharded || write.taken || write.added || write.set) return undefined
    if (write.created) return accountOfRecord(write.created)
    return write.idempotencyKey?.account
  }

  /**
   * Appends a write to its account's list, decided on this replica's view
   * at `decidedAt` (`moves` then). Writes of one account decided while its
   * append is under way go together in the next one, under one
   * compare-and-swap on that list's length: the sandbox's log and every
   * other account stay out of it, wherever a Redis Cluster keeps them.
   */
  const appendToAccount = (
    account: string,
    write: StoreWrite,
    undo: (() => void) | undefined,
    decidedAt = moves,
  ): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      let queue = accountQueues.get(account)
      if (queue === undefined) {
        queue = writeQueue(
          (batch) => flushAccount(account, batch),
          () => accountQueues.delete(account),
        )
        accountQueues.set(account, queue)
      }
      queue.add({
        gen,
        text: JSON.stringify({ write, by: `${origin}:${++appended}` }),
        write,
        undo,
        decidedAt,
        resolve,
        reject,
      })
    })

  const refuseAccount = (pending: AccountPending[], error: Error): void => {
    for (const { undo } of pending) undo?.()
    for (const { reject } of pending) reject(error)
  }

  const flushAccount = async (
    account: string,
    batch: AccountPending[],
  ): Promise<void> => {
    while (batch.length > 0) {
      // Sent once this replica's own whole state is stored (holdWrites).
      while (writesHeldNow()) await writesHeld
      const sending = batch.splice(0)
      const since = Math.max(lastRemote, accountRemote.get(account) ?? 0)
      const current = gen
      const late = sending.filter(
        (p) => p.decidedAt < since || p.gen !== current || lost,
      )
      let ready = sending.filter((p) => !late.includes(p))
      if (late.length > 0) refuseAccount(late, new StoreConflict())
      if (ready.length === 0) continue
      if (current === undefined || !sharded) {
        refuseAccount(ready, new StoreConflict())
        continue
      }
      const list = accountList(current, account)
      const from = accountSeen.get(account) ?? 1
      let reply: number
      let reserved = 0
      // Whether the append was sent: only then may it be stored unanswered.
      let sent = false
      try {
        // @note An account the log never held (one a replica's JavaScript
        // API made, which it does not store) gets its list on its first
        // write, as its records were kept before each account had one.
        if (!listed.has(account)) await addAccountLists(current, [account])
        // @note Reserved before the append, in the sandbox's slot: past
        // `limits.records`, the writes that would make more are refused.
        const making = ready.filter((p) => p.write.created).length
        reserved = await reserveRecords(making, current)
        // @note Before the limit refuses: another replica may have written
        // to the account meanwhile, this write among them (a keyed retry,
        // which is replayed once read).
        if (reserved < making && (await redis.lLen(list)) !== from) {
          if (roomGen === current) room += reserved
          staleAccounts.add(account)
          refuseAccount(ready, new StoreConflict())
          continue
        }
        if (reserved < making) {
          const over = ready.filter((p) => p.write.created).slice(reserved)
          refuseAccount(over, recordsFull())
          ready = ready.filter((p) => !over.includes(p))
          if (ready.length === 0) continue
        }
        // @note Indexed first, in the sandbox's slot: a token stored and
        // not indexed could not be found by another replica. One indexed
        // and not stored is looked for in its account, and not found.
        const tokens: string[] = []
        for (const { write } of ready)
          if (write.created && 'token' in write.created)
            tokens.push(secretDigest(write.created.token.secret), account)
        if (tokens.length > 0) {
          const index = genKeys(current).tokens
          const indexed = (await redis
            .eval(INDEX, {
              keys: [genKey, index],
              arguments: [current, ...tokens],
            })
            .then(step)) as number
          if (indexed < 0)
            loseRecords(
              current,
              `The Redis store at ${shown} lost the index of its tokens: its key ${index} is gone or made anew (a key of the namespace deleted by hand?), so a token of an account a replica has not loaded cannot be found.`,
            )
          // Another generation is current: decided again, on it.
          if (indexed === 0) {
            await regainGeneration()
            if (roomGen === current) room += reserved
            refuseAccount(ready, new StoreConflict())
            continue
          }
        }
        const texts = ready.map((p) => p.text)
        const args = [String(from), ...texts]
        accountInFlight.set(account, { from, texts })
        sent = true
        reply = (await redis.eval(ACCOUNT_APPEND, {
          keys: [list],
          arguments: args,
        })) as number
      } catch (error) {
        accountInFlight.delete(account)
        if (error instanceof LimitReachedError) {
          refuseAccount(ready, error)
          continue
        }
        if (mayBeStored(error, sent)) {
          lost = true
          Object.assign(error as Error, { unsettled: true })
        } else if (roomGen === current) room += reserved
        refuseAccount(ready, refusal(error as Error))
        continue
      }
      accountInFlight.delete(account)
      refused = undefined
      if (reply >= 0) {
        // @note Only of the generation appended to: a reply that comes
        // after this replica took another's state counts that state's list
        // wrong, and its reads would skip what others append there.
        if (gen === current)
          accountSeen.set(
            account,
            Math.max(reply, accountSeen.get(account) ?? 1),
          )
        for (const { write } of ready)
          if (write.created) countStored(write.created)
        for (const { resolve } of ready) resolve()
        continue
      }
      // @note Gone while Redis still names its generation: not a reset or a
      // restore, which left it, but a list Redis lost (a DEL by hand), said
      // as a load says it, rather than as a state another replica stored.
      if (
        reply === -1 &&
        gen === current &&
        (await redis.get(genKey).catch(() => null)) === current
      ) {
        if (roomGen === current) room += reserved
        refuseAccount(ready, recordsLost(current, listGone(account, list)))
        continue
      }
      // @note Shorter than this replica read it: gone with its generation
      // (a reset, a restore), or lost by Redis. Putting back what Redis
      // holds tells which. Longer: another replica appended first, and the
      // sync that comes before the write is decided again reads it (here,
      // the write would wait for this replica's turn to apply).
      if (-1 - reply < from) lost = true
      else staleAccounts.add(account)
      // The writes are decided again, and reserve again.
      if (roomGen === current) room += reserved
      refuseAccount(ready, new StoreConflict())
    }
  }

  // Records this replica reserved of `limits.records` in the generation
  // `roomGen`, and has not used.
  let room = 0
  let roomGen: string | undefined
  // The count of records Redis said when it last refused to reserve.
  let countWhenFull = 0
  /**
   * Takes `needed` records of `limits.records` from what this replica
   * reserved, reserving more (a few ahead) when that is not enough: what it
   * could take, fewer once the limit is reached.
   */
  const reserveRecords = async (
    needed: number,
    current: string,
  ): Promise<number> => {
    const most = options.maxRecords
    if (most === undefined || needed === 0) return needed
    if (roomGen !== current) {
      room = 0
      roomGen = current
    }
    if (room < needed) {
      const ahead = Math.max(needed - room, RESERVE_AHEAD)
      const [granted, count] = await reserve(current, ahead, false)
      if (roomGen !== current) return 0
      room += granted
      countWhenFull = count
    }
    const taken = Math.min(room, needed)
    room -= taken
    return taken
  }
  /**
   * Reserves `n` records of `limits.records` at once, for an account and
   * key that a call of the sandbox's own API adds: all of them, or the
   * limit refuses the call.
   */
  const reserveExactly = async (current: string, n: number): Promise<void> => {
    if (options.maxRecords === undefined) return
    const [granted, count] = await reserve(current, n, true)
    if (granted === n) return
    countWhenFull = count
    throw recordsFull()
  }
  /**
   * Sends RESERVE for `n` records of generation `current` (`exact`: all or
   * none): what it granted and the count. Another generation current is a
   * write to decide again; the count gone, records Redis lost.
   */
  const reserve = async (
    current: string,
    n: number,
    exact: boolean,
  ): Promise<[granted: number, count: number]> => {
    const keys = [genKeys(current).records, genKey]
    const args = [
      String(n),
      String(options.maxRecords),
      exact ? '1' : '',
      current,
    ]
    const reply = (await redis.eval(RESERVE, {
      keys,
      arguments: args,
    })) as [number, number]
    if (reply[0] === -2) {
      await regainGeneration()
      throw new StoreConflict()
    }
    if (reply[0] === -1)
      loseRecords(
        current,
        `The Redis store at ${shown} lost the count of its records: its key ${keys[0]} is gone (a key of the namespace deleted by hand?), so limits.records cannot be kept across the fleet.`,
      )
    return reply
  }
  /** Adds `n` to the count of generation `current`'s records, if it is still there. */
  const countRecords = (current: string, n: number): Promise<unknown> => {
    const keys = [genKeys(current).records]
    return redis.eval(COUNT_RECORDS, { keys, arguments: [String(n)] })
  }
  /** The refusal of a record past `limits.records`, counted across the fleet. */
  const recordsFull = (): LimitReachedError =>
    new LimitReachedError(
      'limits.records',
      `The sandbox holds ${countWhenFull} records (accounts, API keys, customers and tokens) in its Redis store, counting those its replicas are storing, the most that limits.records (${options.maxRecords}) allows; nothing was stored. ${limitHint('limits.records', 'Reset the sandbox (POST /__sandbox/reset or sandbox.reset())')}`,
    )

  // Accounts whose lists others appended to since this replica read them.
  const staleAccounts = new Set<string>()
  /** Reads on the lists of the accounts an append found others wrote to, in the order of applying. */
  const readStaleAccounts = async (): Promise<void> => {
    const current = gen
    if (current === undefined) return staleAccounts.clear()
    for (const account of staleAccounts) {
      staleAccounts.delete(account)
      await readAccountTail(account, current)
    }
  }

  /**
   * Reads what other replicas appended to a loaded account's list since
   * this replica last read it, and applies it (in the order of applying).
   */
  const readAccountTail = async (
    account: string,
    current: string,
    prefetched?: string[],
    prefetchedFrom?: number,
  ): Promise<void> => {
    if (gen !== current || !isLoaded(account)) return
    const from = prefetchedFrom ?? accountSeen.get(account) ?? 1
    const list = accountList(current, account)
    const reply = prefetched ?? (await bounded(() => readList(list, from)))
    if (gen !== current || !isLoaded(account)) return
    if (reply[0] === '0' && !listed.has(account)) return
    if (Number(reply[0]) < from) {
      lost = true
      return
    }
    await applyAccountEntries(account, from, reply.slice(1))
  }

  /** One account's list from place `from` on, after its length, as of one moment. */
  const readList = async (list: string, from: number): Promise<string[]> =>
    (await redis.eval(ACCOUNT_READ, {
      keys: [list],
      arguments: [String(from)],
    })) as string[]

  /**
   * Applies entries of an account's list from place `from` on: its records
   * (those of the state that began the generation), then its writes, those
   * this replica applied or appended itself skipped.
   */
  const applyAccountEntries = async (
    account: string,
    from: number,
    texts: string[],
  ): Promise<void> => {
    const current = gen
    const records: CreatedRecord[] = []
    const applied: StoreWrite[] = []
    const own = accountInFlight.get(account)
    let at = from
    for (const text of texts) {
      const index = at++
      if (index < (accountSeen.get(account) ?? 0)) continue
      if (own && own.texts[index - own.from] === text) continue
      const entry = parseAccountEntry(text, account, index)
      if ('write' in entry) applied.push(entry.write)
      else if (!('header' in entry)) records.push(entry)
    }
    if (records.length > 0) await source.insert(records)
    for (const write of applied) await source.apply(write)
    // Another generation taken meanwhile (this replica's own state) holds
    // none of them: its count of the list is its own.
    if (gen !== current) return
    accountSeen.set(account, Math.max(at, accountSeen.get(account) ?? 0))
    if (applied.length > 0) accountRemote.set(account, moved())
  }

  /** Appends writes to the sandbox's log if it holds `at` entries. */
  const appendWrites = (ready: Pending[], at: number): Promise<unknown> => {
    const records = recordsOf(ready)
    const g = genKeys(gen ?? '')
    const keys = [log, lastState, base, g.tokens, g.accounts, ...records.keys]
    const args = [
      String(at),
      String(ready.length),
      ...ready.map((p) => p.text),
      ...records.args,
    ]
    return redis
      .evalSha(scripts.append, { keys, arguments: args })
      .catch(reloadScripts(APPEND, keys, args))
  }

  /**
   * Makes the lists of accounts that an admin call adds, each beginning by
   * naming it, and names them among generation `current`'s accounts.
   */
  const addAccountLists = async (
    current: string,
    accounts: string[],
  ): Promise<void> => {
    for (const account of accounts) listed.add(account)
    await redis.sAdd(genKeys(current).accounts, accounts)
    await Promise.all(
      accounts.map((account) => {
        const list = accountList(current, account)
        const args = [
          '0',
          JSON.stringify({ header: { account, gen: current } }),
        ]
        // Refused when it exists (a retry made it): it holds what it should.
        return redis.eval(ACCOUNT_APPEND, { keys: [list], arguments: args })
      }),
    )
  }

  const flush = async (batch: Pending[]): Promise<void> => {
    while (batch.length > 0) {
      // A whole state goes alone: the writes before it first.
      const state = batch.findIndex((p) => p.state !== undefined)
      const sending = batch.splice(
        0,
        state === 0 ? 1 : state < 0 ? batch.length : state,
      )
      // Decided before another replica's write was applied here: decided
      // without it, so decided again.
      const late = sending.filter(
        (p) => (p.decidedAt < lastRemote && !p.replaced) || lost,
      )
      const ready = sending.filter((p) => !late.includes(p))
      if (late.length > 0) refuse(late, new StoreConflict())
      if (ready.length === 0) continue
      const at = seen
      const first = ready[0]!
      if (first.state?.counted) {
        // @note Counted now, at the place it is appended: made earlier, it
        // missed the records stored since, and counted those of writes
        // this copy had decided and Redis then refused (decided again,
        // stored after it, and so counted twice by a replica that starts
        // from it).
        const { entry } = first.state
        entry.counts = Object.fromEntries(stored)
        first.text = logText(entry, markOf(first.text)!)
      }
      // Settled once `seen` moved past the entries appended (or did not).
      inFlight = { from: at, texts: ready.map((p) => p.text) }
      let length: number
      // Whether the append was sent: only then may it be stored unanswered.
      let sent = false
      try {
        if (first.state) {
          length = await appendState(
            first.replaced === 'all' ? 'end' : seen,
            first.text,
            first.state,
            first.replaced === 'records',
            () => (sent = true),
          )
        } else {
          // @note An account that an admin call adds has its list before
          // the log says it exists: no replica appends to one that is not
          // there.
          const current = gen
          const added = sharded
            ? ready.flatMap((p) => p.write?.added?.account?.id ?? [])
            : []
          // @note Reserved ahead too, toward `limits.records` across the
          // fleet, all or none; a change refused after it leaves the count
          // a little high until the next whole state counts again.
          const adding = sharded
            ? ready.reduce(
                (n, p) =>
                  n +
                  (p.write?.added?.account ? 1 : 0) +
                  (p.write?.added?.api_key ? 1 : 0),
                0,
              )
            : 0
          if (current !== undefined && adding > 0) {
            await reserveExactly(current, adding)
            await addAccountLists(current, added)
          }
          sent = true
          length = (await appendWrites(ready, at)) as number
        }
      } catch (error) {
        // Sent, and the connection closed before the answer came: Redis
        // may hold it. The answer says so, and this copy takes what Redis
        // holds before it decides again.
        if (mayBeStored(error, sent)) {
          lost = true
          Object.assign(error as Error, { unsettled: true })
        }
        refuse(ready, refusal(error as Error))
        inFlight = undefined
        continue
      }
      refused = undefined
      settle(ready, length)
      inFlight = undefined
    }
  }

  // @note The scripts of an account's list go whole (EVAL, which Redis
  // caches as EVALSHA's): each list may sit on any node of a cluster, and
  // a write sent by its SHA1 alone to a node that lacks the script fails,
  // and goes again whole; cut off between the two, it was answered as
  // perhaps stored where Redis never ran it.
  // @note Sent by their SHA1 alone: the first call on a node that lacks a
  // script (a new node of a cluster, a Redis restarted) sends it whole.
  const scripts = {
    append: sha1(APPEND),
    appendState: sha1(APPEND_STATE),
    addExpiring: sha1(ADD_EXPIRING),
    load: sha1(LOAD),
    lookup: sha1(LOOKUP),
    read: sha1(READ),
    length: sha1(LENGTH),
    hit: sha1(HIT),
    journal: sha1(JOURNAL),
    takeSnapshot: sha1(TAKE_SNAPSHOT),
  }
  const reloadScripts =
    (script: string, keys: string[], args: string[]) =>
    async (error: Error): Promise<unknown> => {
      if (!/NOSCRIPT/.test(error.message)) throw error
      return redis.eval(script, { keys, arguments: args })
    }

  /**
   * Refuses a namespace whose keys hold what this sandbox never writes
   * there (another program's keys, a hand-made edit), naming the key, where
   * a script would fail on it with Redis's words alone.
   */
  const inspect = async (): Promise<void> => {
    const kept: [key: string, type: string, what: string][] = [
      [log, 'list', 'a list, its log of writes'],
      [
        lastState,
        'count',
        'a whole number, the place of its last whole state in the log',
      ],
      [
        base,
        'count',
        'a whole number, how many entries left the front of its log',
      ],
      [genKey, 'string', 'a string, the generation that holds its records'],
      [journalKey, 'list', 'a list, its journal'],
      [marksKey, 'hash', "a hash, where each account's journal begins"],
      [fleetKey, 'string', 'a string, the options every replica shares'],
      [snapshotKeys.infos, 'hash', 'a hash, its named snapshots'],
      [snapshotKeys.datas, 'hash', 'a hash, the data of its named snapshots'],
      [snapshotKeys.order, 'list', 'a list, the order of its named snapshots'],
      [deadGens, 'set', 'a set, the generations whose lists are to go'],
    ]
    const reply = (await redis.eval(INSPECT, {
      keys: kept.map(([key]) => key),
    })) as string[]
    for (const [at, [key, type, what]] of kept.entries()) {
      const found = reply[2 * at]!
      const value = reply[2 * at + 1]!
      if (found === 'none') continue
      if (
        type === 'count'
          ? found === 'string' && /^\d{1,15}$/.test(value)
          : found === type
      )
        continue
      throw new Error(
        `The Redis store at ${shown} cannot be opened: its key ${key} holds ${found === 'string' ? `the string ${JSON.stringify(value)}${value.length === 40 ? '…' : ''}` : `a ${found}`}, where this sandbox keeps ${what}. Delete the key (or every key of the namespace ${namespace}), or give the store another namespace (or database).`,
      )
    }
  }

  /**
   * Redis's `maxmemory-policy`, or `undefined` when this user may not ask
   * (CONFIG is an admin command, refused to many users of a managed Redis).
   */
  const evictionPolicy = async (): Promise<string | undefined> => {
    // @note The node that holds the sandbox's slot is the one that evicts.
    const node = await tagged()
    const reply = await node
      .sendCommand(['CONFIG', 'GET', 'maxmemory-policy'])
      .catch((error: Error) => {
        if (error instanceof ErrorReply) return undefined
        throw error
      })
    // A map, or a list of name and value (RESP2 without type mapping).
    const value = Array.isArray(reply)
      ? reply[1]
      : (reply as Record<string, unknown> | undefined)?.['maxmemory-policy']
    return typeof value === 'string' ? value : undefined
  }

  // Whether this replica already said that Redis lost the log it followed.
  let lossSaid = false
  /**
   * Starts again from what Redis holds, after Redis lost the log this
   * replica followed, and says so once: writes that other replicas stored
   * and this one had not read are gone with it.
   */
  const logLost = (): void => {
    lost = true
    if (lossSaid || !onLog) return
    lossSaid = true
    void bounded(evictionPolicy)
      .catch(() => undefined)
      .then((policy) => {
        onLog(
          policy?.startsWith('allkeys-')
            ? evicts(shown, policy, 'lost the log this replica followed')
            : `The Redis store at ${shown} lost the log this replica followed (a flush, a deleted key, a restart without its append-only file, or a failover to a replica behind): this replica starts again from what Redis holds, or from its own copy when Redis holds nothing. The records of the generation Redis still names are kept; what only the log held and other replicas changed since this one last read it (accounts and API keys added, clocks, scenarios), and every write when Redis holds nothing, may be lost.`,
        )
      })
  }

  /** Keeps this replica's options as the fleet's, unless Redis holds some: then reads those. */
  const joinFleet = async (
    own: FleetOptions,
  ): Promise<{ options: FleetOptions; where: string }> => {
    const text = (await redis.eval(JOIN, {
      keys: [fleetKey, log, base],
      arguments: [JSON.stringify(own), JSON.stringify({ rules: own.rules })],
    })) as string
    const kept = parseFleetOptions(text)
    if (kept === undefined) {
      throw new Error(
        `The Redis store at ${shown} cannot be opened: its key ${fleetKey} holds ${JSON.stringify(text.slice(0, 40))}${text.length > 40 ? '…' : ''}, where this sandbox keeps the options every replica shares. Delete the key (or every key of the namespace ${namespace}), or give the store another namespace (or database).`,
      )
    }
    return { options: kept, where: `the key ${fleetKey}` }
  }

  let fleet: { options: FleetOptions; where: string } | undefined
  try {
    const policy = await bounded(evictionPolicy)
    if (policy?.startsWith('allkeys-')) throw new Error(evicts(shown, policy))
    await bounded(inspect)
    if (options.fleet) {
      const own = options.fleet
      fleet = await bounded(() => joinFleet(own))
    }
    // The first replica's seeded state is everyone's; the others take it.
    await bounded(resync, { steps: true })
    // @note A log of an earlier version keeps every account's records in
    // the sandbox's slot: it is stored again, each account in its own
    // list, so that a Redis Cluster can spread them.
    for (let attempt = 1; ; attempt++) {
      // Read here: the state this replica stored, or another's, set it.
      if (sharded) break
      try {
        await bounded(() => inTurn(loadEvery), { steps: true })
        await bounded(() => append(wholeState(), undefined, moves), {
          writes: true,
          steps: true,
        })
      } catch (error) {
        if (!(error instanceof StoreConflict) || attempt >= MAX_CATCH_UPS)
          throw error
        await bounded(resync, { steps: true })
      }
    }
    if (gen !== undefined) {
      const current = gen
      await bounded(() => ensurePersisted(current))
    }
    // @note What a replica stopped between a whole state and dropping the
    // generations it left, goes now.
    void bounded(dropDeadGenerations, { steps: true }).catch(() => {})
    // @note Sent once now, and Redis keeps the script: a first write sent by
    // its SHA1 alone would otherwise fail on NOSCRIPT and go again whole,
    // and a connection lost between the two would lose a write Redis never ran.
    // Its length never matches, so it appends nothing.
    await bounded(() =>
      redis.eval(APPEND, { keys: logKeys, arguments: ['-1', '0'] }),
    ).catch(() => {})
  } catch (error) {
    serving.destroy()
    throw error instanceof Error && /Redis store/.test(error.message)
      ? error
      : new Error(
          refusedCredentials(error as Error) === undefined
            ? `Cannot read the Redis store at ${shown}: ${describe(error as Error).replace(/\.$/, '')}.`
            : connectFailure(error as Error, shown, database),
          { cause: error },
        )
  }

  const journal = options.journal && createJournal(options.journal.limit)

  /** The fleet's journal: entries of one moment are appended together. */
  function createJournal(
    limit: number,
  ): SharedJournal & { flush(): Promise<unknown> } {
    const key = journalKey
    const marks = marksKey
    let queued: string[] = []
    let written: Promise<unknown> = Promise.resolve()
    const write = (): Promise<unknown> => {
      if (queued.length === 0) return written
      const args = [String(limit), ...queued]
      queued = []
      written = redis
        .evalSha(scripts.journal, { keys: [key], arguments: args })
        .catch(reloadScripts(JOURNAL, [key], args))
        // An entry lost with Redis away is one line of a log, never a write.
        .catch(() => {})
      return written
    }
    return {
      flush: write,
      append(entry) {
        if (queued.length === 0) setImmediate(write)
        queued.push(JSON.stringify(entry))
      },
      list: ({ limit: most = limit, accountId }) =>
        bounded(async () => {
          await write()
          const [texts, mark] = await Promise.all([
            redis.lRange(key, -limit, -1),
            accountId === undefined
              ? Promise.resolve(null)
              : redis.hGet(marks, accountId),
          ])
          const entries: JournalEntry[] = []
          for (
            let at = texts.length - 1;
            at >= 0 && entries.length < most;
            at--
          ) {
            const entry = journalEntry(texts[at]!)
            // Not one this sandbox wrote (an edit by hand): not a request.
            if (entry === undefined) continue
            if (mark !== null && entry.request_id === mark) break
            if (accountId === undefined || entry.account_id === accountId)
              entries.push(entry)
          }
          return entries
        }),
      clear: (accountId, { reset = false } = {}) =>
        bounded(
          async () => {
            await write()
            if (accountId === undefined) {
              await redis.del([key, marks])
              return
            }
            // The account's view ends at the newest entry of the journal so far.
            const [newest] = await redis.lRange(key, -1, -1)
            const request_id = newest && journalEntry(newest)?.request_id
            if (request_id) await redis.hSet(marks, accountId, request_id)
          },
          // @note A write: one sent and not answered may have been run, and
          // the 503 says to read it back, not that nothing changed.
          { writes: true },
        ).catch((error: Error) => {
          // @note A reset made in this copy and not in Redis: put back what
          // it holds. A clear alone changed nothing here, and putting back
          // the whole state answered every request this replica was
          // answering 503, blaming a reset nobody made.
          if (reset) lost = true
          // Said in Redis's word (TRYAGAIN while the slot moves).
          if (error instanceof ErrorReply)
            Object.assign(error, { code: replyCode(error) })
          throw error
        }),
    }
  }

  function createSnapshots(): SharedSnapshots {
    const { infos, datas, order } = snapshotKeys
    return {
      take: (info, data, most) =>
        bounded(
          async () => {
            const keys = [infos, datas, order]
            const args = [info.name, JSON.stringify(info), data, String(most)]
            const kept = await redis
              .evalSha(scripts.takeSnapshot, { keys, arguments: args })
              .catch(reloadScripts(TAKE_SNAPSHOT, keys, args))
            return kept === 1
          },
          { writes: true },
        ),
      data: (name) =>
        bounded(async () => (await redis.hGet(datas, name)) ?? undefined),
      list: () =>
        bounded(async () => {
          const [names, texts] = await Promise.all([
            redis.lRange(order, 0, -1),
            redis.hGetAll(infos),
          ])
          return names.flatMap((name) => {
            const info = snapshotInfo(texts[name])
            return info ? [info] : []
          })
        }),
    }
  }

  // Taken now: a later start from the log (after Redis lost it) is no join.
  const joined = !founded
  opened = true
  return {
    kind: 'redis',
    joined,
    fleet,
    outage: {
      where: 'in its Redis store',
      until: 'Redis takes writes again',
      code: 'REDIS_UNAVAILABLE',
      reads: { from: 'its Redis store', until: 'Redis answers again' },
      untilFixed: {
        // @note Nothing this sandbox sends reaches it, a reset included.
        REDIS_BAD_LOG:
          "the log holds only this sandbox's entries again: remove the entry GET /__sandbox/health names, or the namespace's keys",
        // A reset and a restore load none of the records they replace.
        REDIS_LOST_RECORDS:
          'the sandbox is reset (POST /__sandbox/reset) or a snapshot restored',
      },
    },
    ...(journal && { journal }),
    snapshots: createSnapshots(),
    sync: (credential) =>
      bounded(sync, { turn: true, steps: true }).then(() =>
        credential === undefined ? undefined : loadAccountOf(credential),
      ),
    loaded: isLoaded,
    async loadAll() {
      wholeInUse++
      try {
        await inTurn(loadEvery)
      } catch (error) {
        wholeInUse--
        throw error
      }
      let released = false
      return () => {
        if (released) return
        released = true
        wholeInUse--
        evictIfDue()
      }
    },
    resync: () => bounded(resync, { turn: true, steps: true }),
    version: () => moves,
    commit(write, undo, decidedAt) {
      if (overdue !== undefined) undo?.()
      const account = accountOfWrite(write)
      return bounded(
        () =>
          account === undefined
            ? append({ write }, undo, decidedAt)
            : appendToAccount(account, write, undo, decidedAt),
        { writes: true },
      )
    },
    // @note A state that replaced the data is whole in this copy, however
    // few of the accounts it replaced were loaded.
    saveState: (decidedAt, replaced) =>
      bounded(
        async () => {
          const state = await settledWholeState(replaced !== undefined)
          try {
            return await append(state, undefined, decidedAt, replaced)
          } finally {
            releaseWrites()
          }
        },
        { writes: true, steps: true },
      ),
    alone: (work) =>
      inTurn(async () => {
        alone++
        try {
          return await work()
        } finally {
          alone--
        }
      }),
    async forgetHits() {
      const pattern = `${tag}:hits:*`
      try {
        // @note The node that holds the sandbox's slot holds every count.
        const node = await bounded(tagged)
        // @note Each call bounded alone: a Redis that other sandboxes fill
        // with millions of keys answers each in time, and all of them in
        // more than `timeoutMs`.
        let cursor = '0'
        do {
          const reply = await bounded(() =>
            node.scan(cursor, { MATCH: pattern, COUNT: 10_000 }),
          )
          cursor = String(reply.cursor)
          if (reply.keys.length > 0) await bounded(() => node.del(reply.keys))
        } while (cursor !== '0')
      } catch (error) {
        // This copy was reset and Redis was not: put back what it holds.
        lost = true
        throw error
      }
    },
    hit(key, windowMs) {
      const name = `${tag}:hits:${key}`
      const args = [String(windowMs)]
      return bounded(async () => {
        const count = (await redis
          .evalSha(scripts.hit, { keys: [name], arguments: args })
          .catch(reloadScripts(HIT, [name], args))
          .catch((error: Error) => {
            throw refusal(error)
          })) as number
        refused = undefined
        return count
      })
    },
    fault: () =>
      fault ??
      overdue ??
      refused ??
      misrouted ??
      unreadable ??
      (lostRecords?.gen === gen ? lostRecords?.fault : undefined),
    async close() {
      // @note The entries of requests answered just before a close (a
      // rolling restart) go first: queued for the next turn of the event
      // loop, they were refused by a client already closing, and lost.
      if (journal) await bounded(journal.flush).catch(() => {})
      // What this replica reserved and never used is the fleet's again.
      const unused = room
      if (unused > 0 && roomGen !== undefined && roomGen === gen) {
        room = 0
        const current = roomGen
        await bounded(() => countRecords(current, -unused)).catch(() => {})
      }
      connected = false
      // @note Bounded: a Redis that answers nothing would hold the close
      // for ever behind the replies it waits for.
      await bounded(() => serving.close()).catch(() => serving.destroy())
    },
  }
}

/**
 * Refuses a URL that names no Redis database, naming it and what is wrong,
 * where the client's own error named neither; returns the database.
 */
function checkRedisUrl(url: string, shown: string): number {
  // A password that holds / @ : or % as such ends the host early, or fails.
  const escapes = 'a password writes / as %2F, @ as %40, : as %3A and % as %25'
  let parsed: URL
  try {
    parsed = new URL(url)
    decodeURIComponent(parsed.username)
    decodeURIComponent(parsed.password)
  } catch {
    throw new Error(
      `The Redis store URL ${shown} is not a URL: write it redis://[user:password@]host:port/db (${escapes}).`,
    )
  }
  // @note Past the host, an @ is a password's: said without the path.
  if (/@/.test(parsed.pathname + parsed.search + parsed.hash)) {
    throw new Error(
      `The Redis store URL ${shown} holds an @ after its host: write it redis://[user:password@]host:port/db (${escapes}).`,
    )
  }
  const path = decodeURIComponent(parsed.pathname.replace(/^\//, ''))
  if (path !== '' && !/^\d{1,9}$/.test(path)) {
    throw new Error(
      `The Redis store URL ${shown} names the database "${path}", and a Redis database is a number: 0 to 15 unless Redis is set with more (redis://host:port/0).`,
    )
  }
  return Number(path)
}

/** The first word of a refusal of this replica's user or password: `WRONGPASS`, `NOAUTH`. */
function refusedCredentials(error: Error): 'WRONGPASS' | 'NOAUTH' | undefined {
  // A failed first connection comes wrapped, with Redis's answer inside.
  const reply =
    error instanceof ReconnectStrategyError ? error.socketError : error
  if (!(reply instanceof ErrorReply)) return undefined
  const word = /^[A-Z]+/.exec(reply.message)?.[0]
  return word === 'WRONGPASS' || word === 'NOAUTH' ? word : undefined
}

/** Why the first connection to Redis failed, in one sentence naming the URL. */
function connectFailure(error: Error, shown: string, database: number): string {
  const refused = refusedCredentials(error)
  if (refused === 'WRONGPASS') {
    return `The Redis store at ${shown} refused its user and password (WRONGPASS): give --store the ones Redis takes, redis://user:password@host:port/db (the user "default" when it names none), and check that the user is enabled.`
  }
  if (refused === 'NOAUTH') {
    return `The Redis store at ${shown} asks for a password, and the URL gives none (NOAUTH): give --store redis://:password@host:port/db, or redis://user:password@host:port/db for an ACL user.`
  }
  if (/without any password configured/i.test(error.message)) {
    return `The Redis store at ${shown} takes no password, and the URL gives one: give --store the URL without it, or set Redis's requirepass.`
  }
  // A database other than 0 on a node of a Redis Cluster, which has no other.
  if (/SELECT is not allowed in cluster mode/.test(error.message)) {
    return `The Redis store at ${shown} is a Redis Cluster, which has database 0 only: give the URL without a database (or with /0).`
  }
  if (/DB index is out of range/i.test(error.message)) {
    return `The Redis store at ${shown} has no database ${database} (${describe(error)}): Redis has 16, 0 to 15, unless it is set with more databases; give --store a URL with one of its databases.`
  }
  return `Cannot reach the Redis store at ${shown}: ${describe(error).replace(/\.$/, '')}. Start Redis there, or give --store another URL.`
}

/**
 * Why a Redis whose `maxmemory-policy` evicts any key (`allkeys-lru`) cannot
 * keep a sandbox: when full, it deletes the log, and acknowledged writes
 * with it.
 */
function evicts(
  shown: string,
  policy: string,
  what = 'cannot keep a sandbox',
): string {
  return `The Redis store at ${shown} ${what}: it evicts any key when it is full (maxmemory-policy ${policy}), the sandbox's log among them, which loses acknowledged writes. Set maxmemory-policy to noeviction (or a volatile-* policy, which evicts only keys that expire), or give --store another Redis.`
}

/** The mark (`by`) that ends an entry this sandbox appended, as READ finds it. */
function markOf(text: string): string | undefined {
  return /"by":"([^"]*)"}$/.exec(text.slice(-100))?.[1]
}

/** One entry of the fleet's journal, or `undefined` when it is not one. */
function journalEntry(text: string): JournalEntry | undefined {
  try {
    const entry = JSON.parse(text) as unknown
    return entry !== null &&
      typeof entry === 'object' &&
      typeof (entry as JournalEntry).request_id === 'string'
      ? (entry as JournalEntry)
      : undefined
  } catch {
    return undefined
  }
}

/** A snapshot's description as kept; `undefined` for what this sandbox never wrote. */
function snapshotInfo(
  text: string | undefined,
): SharedSnapshotInfo | undefined {
  if (text === undefined) return undefined
  try {
    const info = JSON.parse(text) as Partial<SharedSnapshotInfo> | null
    return typeof info?.name === 'string' &&
      typeof info.created_at === 'string' &&
      typeof info.customers === 'number' &&
      typeof info.tokens === 'number'
      ? (info as SharedSnapshotInfo)
      : undefined
  } catch {
    return undefined
  }
}

/**
 * An entry as this version appends it to the log, marked `by` its replica:
 * a write with `"state": null` beside it, a state with `"write": null`, so
 * that a replica of an earlier version (which reads only each account's
 * records from the log's slot) refuses the log as one it cannot read, and
 * answers 503, where it would answer 201 for writes no replica of this
 * version reads.
 */
function logText(entry: LogEntry, by: string): string {
  return JSON.stringify(
    'write' in entry
      ? { ...entry, state: null, by }
      : { ...entry, write: null, by },
  )
}

/** One log entry, read from Redis: bounded, and in the log's shape. */
function parseEntry(text: string, at: number): LogEntry {
  if (text.length > MAX_ENTRY_BYTES) {
    throw badLog(
      `The Redis store's log entry ${at} is larger than ${MAX_ENTRY_BYTES} bytes; it is not this sandbox's.`,
    )
  }
  let entry: unknown
  try {
    entry = JSON.parse(text)
  } catch {
    throw badLog(
      `The Redis store's log entry ${at} is not JSON; the key holds something else.`,
    )
  }
  // A `null` beside the other is this version's mark (logText).
  const held = (key: 'write' | 'state') =>
    entry !== null &&
    typeof entry === 'object' &&
    (entry as Record<string, unknown>)[key] != null
  if (held('write') === held('state')) {
    throw badLog(
      `The Redis store's log entry ${at} is neither a write nor a state; the key holds something else.`,
    )
  }
  const parsed = entry as Record<string, unknown>
  delete parsed[held('write') ? 'state' : 'write']
  return parsed as LogEntry
}

/** One record of an account's list, read from Redis: in the list's shape, and the account's. */
function parseRecord(text: string, account: string, at: number): CreatedRecord {
  let record: unknown
  try {
    record = JSON.parse(text)
  } catch {
    throw badLog(
      `The Redis store's record ${at} of the account ${account} is not JSON; the key holds something else.`,
    )
  }
  const created = record as Partial<
    Record<'customer' | 'token', { account_id?: unknown }>
  > | null
  const inner = created?.customer ?? created?.token
  if (
    typeof inner !== 'object' ||
    inner === null ||
    inner.account_id !== account
  ) {
    throw badLog(
      `The Redis store's record ${at} of the account ${account} is neither a customer nor a token of that account; the key holds something else.`,
    )
  }
  return record as CreatedRecord
}

/** One entry of an account's list (layout 2): its header, a record of the state that began it, or a write. */
function parseAccountEntry(
  text: string,
  account: string,
  at: number,
): { header: unknown } | { write: StoreWrite } | CreatedRecord {
  if (text.startsWith('{"header":')) return { header: true }
  if (text.startsWith('{"write":')) {
    const entry = parseEntry(text, at)
    if ('write' in entry) return entry
  }
  return parseRecord(text, account, at)
}

/**
 * Whether an append that failed with `error` may yet be stored: it was
 * sent (`sent`), and its answer never came (the connection closed first).
 * One that Redis answered with an error, or that the client never sent
 * (offline, or closed), is not.
 */
function mayBeStored(error: unknown, sent: boolean): boolean {
  return (
    sent &&
    !(
      error instanceof ErrorReply ||
      error instanceof ClientOfflineError ||
      error instanceof ClientClosedError
    )
  )
}

/**
 * Writes that wait to be sent together (group commit): the first starts
 * `flush`, which sends those waiting, a batch at a time, until none is
 * left; one that comes while a batch is sent waits, and goes in the next.
 */
interface WriteQueue<P> {
  /** The flush under way, if any. */
  readonly flushing: Promise<void> | undefined
  /** Queues a write, and starts a flush unless one is under way (which sends it next). */
  add(pending: P): void
}

/**
 * A `WriteQueue` that `flush` sends, taking its batches from the front of
 * the writes waiting (oldest first); `idle` hears when none waits or is sent.
 */
function writeQueue<P>(
  flush: (waiting: P[]) => Promise<void>,
  idle: () => void = () => {},
): WriteQueue<P> {
  const waiting: P[] = []
  let flushing: Promise<void> | undefined
  const start = (): void => {
    flushing ??= flush(waiting).finally(() => {
      flushing = undefined
      // @note A write that came between the loop's last look at the queue
      // and now (a retry that a refusal woke) would wait there for the next
      // write, or for ever: it goes now.
      if (waiting.length > 0) start()
      else idle()
    })
  }
  return {
    get flushing() {
      return flushing
    },
    add(pending) {
      waiting.push(pending)
      start()
    },
  }
}

/** An error of a log entry that is not this sandbox's, coded for health. */
function badLog(message: string): Error {
  return Object.assign(new Error(message), { code: 'REDIS_BAD_LOG' })
}

/**
 * The code of an error Redis answered, from its first word: `REDIS_OOM`,
 * `REDIS_READONLY`, `REDIS_WRONGTYPE`.
 */
function replyCode(error: Error): string {
  return `REDIS_${/^[A-Z]+/.exec(error.message)?.[0] ?? 'ERR'}`
}

/** An error in a sentence: its message, then its code. */
function describe(error: Error): string {
  const code = (error as { code?: string }).code
  const message = error.message || 'no answer'
  return code && !message.includes(code) ? `${message} (${code})` : message
}

/** The commands the store sends, which one Redis and a Redis Cluster both take. */
type Commands = Pick<
  ReturnType<typeof createClient>,
  | 'evalSha'
  | 'eval'
  | 'get'
  | 'set'
  | 'lRange'
  | 'lLen'
  | 'rPush'
  | 'pExpire'
  | 'sAdd'
  | 'hGet'
  | 'hGetAll'
  | 'hSet'
  | 'del'
  | 'persist'
  | 'sMembers'
  | 'sRem'
>

/**
 * A client, not yet connected, of the Redis Cluster that the node at `url` belongs to: the
 * URL's credentials and TLS go to every node it finds, and a command
 * follows its key's slot wherever the cluster moves it (a failover, a
 * resharding).
 */
function clusterOf(url: string, timeoutMs: number) {
  const { username, password, protocol } = new URL(url)
  const cluster = createCluster({
    rootNodes: [{ url }],
    // As the one Redis's client: the store's watchdog bounds every call.
    commandOptions: { timeout: 0 },
    defaults: {
      ...(username && { username: decodeURIComponent(username) }),
      ...(password && { password: decodeURIComponent(password) }),
      disableOfflineQueue: true,
      socket: {
        connectTimeout: timeoutMs,
        ...(protocol === 'rediss:' && { tls: true as const }),
        reconnectStrategy: (retries: number) =>
          Math.min(50 * 2 ** Math.min(retries, 5), 1000),
      },
    },
  })
  // Heard by the store's own listeners once connected; never unhandled.
  cluster.on('error', () => {})
  return cluster
}

/** The account a created record belongs to. */
const accountOfRecord = (created: CreatedRecord): string =>
  'customer' in created ? created.customer.account_id : created.token.account_id

/**
 * What a generation's index knows a token's secret by: its SHA-256, so
 * that the index names no secret. One-shot `hash` (Node 20.12): no Hash
 * object for each token created or looked up.
 */
const secretDigest = (secret: string): string =>
  hash('sha256', secret, 'base64url')

/** The SHA1 that Redis names a script by (`EVALSHA`). */
const sha1 = (script: string): string => hash('sha1', script, 'hex')
