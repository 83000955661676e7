// The file store: the server's data file, its lock, its snapshot and its append-only log.
import {
  link,
  lstat,
  lutimes,
  open,
  readdir,
  readFile,
  readlink,
  realpath,
  rename,
  stat,
  symlink,
  unlink,
  writeFile,
  type FileHandle,
} from 'node:fs/promises'
import { constants } from 'node:buffer'
import { readFileSync, readlinkSync } from 'node:fs'
import { hostname } from 'node:os'
import { dirname, basename, join, resolve as resolvePath } from 'node:path'
import { createInterface } from 'node:readline'
import type { SandboxData } from './schemas.ts'
import {
  MAX_CHANGES_BETWEEN_STATES,
  type DurableExtras,
  type StateParts,
  type Store,
  type StoreFault,
} from './store.ts'
import { sleep } from '../_utils.ts'
import {
  OptionsError,
  type Explain,
  type OptionNaming,
} from '../option-messages.ts'

/** What to do with a data file that cannot be read, as `naming` says it. */
export const moveAway = (naming: OptionNaming): string =>
  `Move it away or give ${naming.name('dataFile')} another path.`

/**
 * A data file that cannot be used: the server refuses to start and leaves it
 * untouched. Its message names the `dataFile` option; `explain` names it as
 * another reader would (the CLI: `--data-file`).
 */
export class DataFileError extends OptionsError {
  constructor(explain: Explain | string) {
    super(explain)
    this.name = 'DataFileError'
  }
}

/** The storage error in force after a failed write of the data file. */
export type StorageFault = StoreFault

// The errors of a disk (or quota, or file size limit) with no room left.
const OUT_OF_SPACE = new Set(['ENOSPC', 'EDQUOT', 'EFBIG'])

// The kinds of record a line after the first one may hold.
const LINE_KINDS = {
  account: 'accounts',
  api_key: 'api_keys',
  customer: 'customers',
  token: 'tokens',
  idempotency_key: 'idempotency_keys',
} as const satisfies Record<string, keyof (SandboxData & DurableExtras)>

// The kinds that are records of the data, of which a line holds one (or
// an account with its key).
const RECORD_KINDS = { account: 1, api_key: 1, customer: 1, token: 1 }

// The lines that are not records: parts of the state set whole, a
// scenario taken.
const OTHER_KINDS = new Set(['set', 'taken'])

// The parts of the state a `{"set": {...}}` line replaces, each whole.
const SET_PARTS = new Set<string>([
  'clock',
  'account_clocks',
  'scenarios',
] satisfies (keyof StateParts)[])

/**
 * Reads a data file: the sandbox data its snapshot and log lines add up to,
 * or `undefined` when there is none or it is empty (0 bytes). Line 1 is a
 * snapshot (an older single-document data file is one); each later line is
 * one write: a record, as `{"customer": {...}}`, with the
 * `idempotency_key` that replays it; an account with its API key
 * (`{"account": {...}, "api_key": {...}}`); or parts of the state that
 * replace the snapshot's (`{"set": {"clock": {...}}}`: `clock`,
 * `account_clocks`, `scenarios`); or a queued scenario that a call took
 * (`{"taken": {"account_id": null, "operation": "createCustomer"}}`), taken
 * from the queues read so far. A last line without its newline was cut
 * short by a crash before it was acknowledged, and is dropped. Anything
 * else that does not parse is a `DataFileError`.
 *
 * @example
 * const data = await readDataFile('sandbox.json')
 * if (data) await sandbox.load(data)
 */
export async function readDataFile(path: string): Promise<unknown> {
  let handle: FileHandle
  try {
    // @note Opening a FIFO would wait for a writer forever, and a device
    // such as /dev/zero has no end.
    if (!(await stat(path)).isFile()) {
      throw new DataFileError(
        (naming) =>
          `The data file ${path} is not a regular file; it was left untouched. Give ${naming.name('dataFile')} the path of a file (it is created if missing).`,
      )
    }
    handle = await open(path, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    if (error instanceof DataFileError) throw error
    throw new DataFileError(
      `Cannot read the data file ${path}: ${(error as Error).message}`,
    )
  }
  // @note JSON.parse quotes the line: a binary file's control characters
  // would reach the terminal that prints the message. A line that parses
  // but is no line of the format is not called "not valid JSON".
  const unusable = (
    line: number,
    reason: string,
    what = 'is not in the data file format',
  ): DataFileError =>
    new DataFileError(
      (naming) =>
        `The data file ${path} ${what} at line ${line} (${reason.replace(/\p{Cc}/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}); it was left untouched. ${moveAway(naming)}`,
    )
  // @note Read line by line: no string ever holds more than one record (or an
  // older single-document file), however large the data grows.
  const input = handle.createReadStream({ autoClose: false })
  // @note readline holds a line in one string: a line longer than a string
  // may be (a file of zeros, say) would throw where nothing catches it and
  // end the process. Counted before readline sees each chunk.
  let run = 0
  input.on('data', (data) => {
    const chunk = data as Buffer
    const first = chunk.indexOf(0x0a)
    const longest = first === -1 ? run + chunk.length : Math.max(run + first, 0)
    run = first === -1 ? longest : chunk.length - chunk.lastIndexOf(0x0a) - 1
    if (longest > MAX_LINE_BYTES || run > MAX_LINE_BYTES) {
      input.destroy(
        new DataFileError(
          (naming) =>
            `The data file ${path} has a line too long to read (over ${MAX_LINE_BYTES} bytes), so it is damaged or not a data file; it was left untouched. ${moveAway(naming)}`,
        ),
      )
    }
  })
  const lines = createInterface({ input, crlfDelay: Infinity })
  let data: Record<string, unknown> | undefined
  // The ids of the accounts and API keys read so far, once a line adds one.
  const heldIds: Partial<Record<'account' | 'api_key', Set<unknown>>> = {}
  // Where each customer and token read so far is in its list, by id.
  const heldRecords: Partial<
    Record<'customer' | 'token', Map<unknown, number>>
  > = {}
  let number = 0
  let pending: string | undefined
  try {
    for await (const line of lines) {
      if (pending !== undefined) add(pending, number)
      number++
      pending = line
    }
  } catch (error) {
    if (error instanceof DataFileError) {
      // A data file written by hand may be one indented JSON document.
      if (data === undefined) {
        const whole = await readFile(path, 'utf8')
          .then((text) => JSON.parse(text) as unknown)
          .catch(() => undefined)
        if (whole !== null && typeof whole === 'object') return whole
      }
      throw error
    }
    throw new DataFileError(
      `Cannot read the data file ${path}: ${(error as Error).message}`,
    )
  } finally {
    lines.close()
    await handle.close()
  }
  if (pending !== undefined) {
    // readline hides whether the last line ended with a newline; ask the file.
    const complete = number === 1 || (await endsWithNewline(path))
    if (complete) add(pending, number)
  }
  // @note An empty file (as `touch` or `mktemp` leaves it) holds no data to
  // lose: it starts as a missing one does. A server never writes one.
  return data

  function add(line: string, at: number): void {
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch (error) {
      throw unusable(at, (error as Error).message, 'is not valid JSON')
    }
    if (data === undefined) {
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        throw unusable(at, 'not a sandbox data snapshot')
      data = value as Record<string, unknown>
      return
    }
    const entries =
      value !== null && typeof value === 'object' && !Array.isArray(value)
        ? Object.entries(value)
        : []
    // One write, one line: a record, the key that replays it, or both; an
    // account and its API key; parts of the state set whole.
    const kinds = entries.map(([kind]) => kind).toSorted()
    const known = entries.every(
      ([kind]) => Object.hasOwn(LINE_KINDS, kind) || OTHER_KINDS.has(kind),
    )
    const records = kinds.filter((kind) => Object.hasOwn(RECORD_KINDS, kind))
    const oneWrite = records.length <= 1 || records.join() === 'account,api_key'
    if (entries.length === 0 || !known || !oneWrite) {
      throw unusable(
        at,
        `expected one of ${[...Object.keys(LINE_KINDS), ...OTHER_KINDS]
          .map((k) => `{"${k}": {...}}`)
          .join(', ')}`,
      )
    }
    for (const [kind, record] of entries) {
      if (kind === 'set') {
        const parts =
          record !== null &&
          typeof record === 'object' &&
          !Array.isArray(record)
            ? Object.entries(record)
            : []
        const unknown = parts.find(([name]) => !SET_PARTS.has(name))
        if (parts.length === 0 || unknown !== undefined) {
          throw unusable(
            at,
            `"set" holds ${unknown ? `"${unknown[0].slice(0, 100)}", which is` : 'no part, which is'} not one of ${[...SET_PARTS].join(', ')}`,
          )
        }
        // Checked with the whole data when it is loaded.
        for (const [name, part] of parts) data[name] = part
        continue
      }
      if (kind === 'taken') {
        const { account_id, operation } = (record ?? {}) as Partial<
          Record<string, unknown>
        >
        if (
          typeof operation !== 'string' ||
          (account_id !== null && typeof account_id !== 'string')
        ) {
          throw unusable(
            at,
            '"taken" names no operation, or an account id that is not a string or null',
          )
        }
        takeSaved(data.scenarios, account_id, operation)
        continue
      }
      const name = LINE_KINDS[kind as keyof typeof LINE_KINDS]
      // A snapshot written before keys were kept has no list for them.
      const list = (data[name] ??= []) as unknown[]
      if (!Array.isArray(list)) throw unusable(at, `"${name}" is not a list`)
      if (kind === 'account' || kind === 'api_key') {
        // @note An admin call that ran beside the one that made an account
        // stores it too: the same record again, kept once.
        const ids = (heldIds[kind] ??= new Set(list.map(idOf)))
        if (ids.has(idOf(record))) continue
        ids.add(idOf(record))
      } else if (kind === 'customer' || kind === 'token') {
        // @note A create that a snapshot caught between its insert and its
        // line is in both: the same record again, kept once. A different
        // record under a taken id is left for the load to refuse.
        const places = (heldRecords[kind] ??= new Map(
          list.map((held, place) => [idOf(held), place]),
        ))
        const place = places.get(idOf(record))
        if (
          place !== undefined &&
          JSON.stringify(list[place]) === JSON.stringify(record)
        )
          continue
        places.set(idOf(record), list.length)
      }
      list.push(record)
    }
  }
}

/**
 * Takes one queued scenario from saved queues as a call takes it (`take` in
 * `request/scenarios.ts`): the first of `account_id`'s queue (the
 * sandbox-wide one for `null`) for `operation` or `"*"`, once. Queues that
 * are not in the format are left for the load to refuse.
 */
function takeSaved(
  scenarios: unknown,
  accountId: string | null,
  operation: string,
): void {
  if (scenarios === null || typeof scenarios !== 'object') return
  const saved = scenarios as { queue?: unknown; accounts?: unknown }
  let holder: { queue?: unknown } | undefined = saved
  if (accountId !== null) {
    holder = Array.isArray(saved.accounts)
      ? (saved.accounts as { account_id?: unknown; queue?: unknown }[]).find(
          (entry) => entry?.account_id === accountId,
        )
      : undefined
  }
  const queue = holder?.queue
  if (!Array.isArray(queue)) return
  const index = queue.findIndex(
    (s: { operation?: unknown } | null) =>
      s?.operation === '*' || s?.operation === operation,
  )
  const scenario = queue[index] as { remaining?: unknown } | undefined
  if (typeof scenario?.remaining !== 'number') return
  if (--scenario.remaining > 0) return
  queue.splice(index, 1)
  // An account whose queue is empty is not among the saved queues.
  if (accountId !== null && queue.length === 0) {
    const accounts = saved.accounts as unknown[]
    accounts.splice(accounts.indexOf(holder), 1)
  }
}

const idOf = (record: unknown): unknown =>
  record !== null && typeof record === 'object'
    ? (record as { id?: unknown }).id
    : undefined

// The longest line readDataFile reads: what a string can hold, less a chunk
// or two of the stream, which readline adds before the check can stop it.
const MAX_LINE_BYTES = constants.MAX_STRING_LENGTH - (1 << 20)

async function endsWithNewline(path: string): Promise<boolean> {
  const handle = await open(path, 'r')
  try {
    const { size } = await handle.stat()
    if (size === 0) return true
    const last = Buffer.alloc(1)
    await handle.read(last, 0, 1, size - 1)
    return last[0] === 0x0a
  } finally {
    await handle.close()
  }
}

/**
 * Where a data file really is: symbolic links followed, a dangling one too
 * (the file will be created where it points). The lock, and the rename that
 * writes each snapshot, then apply to the file itself: a rename onto a link
 * would replace the link with a copy, and a lock beside a link would let a
 * second server in through it.
 *
 * @example
 * await resolveDataFilePath('link-to-data.jsonl') // '/srv/sandbox/data.jsonl'
 */
export async function resolveDataFilePath(path: string): Promise<string> {
  try {
    return await realpath(path)
  } catch (error) {
    // A loop or a folder we may not read: the read that follows says so.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return path
  }
  const target = await readlink(path).catch(() => undefined)
  if (target !== undefined)
    return resolveDataFilePath(resolvePath(dirname(path), target))
  const folder = await realpath(dirname(path)).catch(() => undefined)
  return folder === undefined ? path : join(folder, basename(path))
}

const tempPath = (path: string): string =>
  join(dirname(path), `.${basename(path)}.${process.pid}.tmp`)

/**
 * Writes `data` to `path` as a fresh log (a snapshot line, then one line per
 * record), atomically: a temporary file beside it, fsync, rename over the old
 * one, fsync of the folder. A crash at any point leaves either the old file or
 * the new one; a failure leaves no temporary file. Returns the bytes written.
 *
 * @example
 * await writeSnapshot('sandbox.json', sandbox.dump())
 */
export async function writeSnapshot(
  path: string,
  data: SandboxData & Partial<DurableExtras>,
): Promise<number> {
  const temp = tempPath(path)
  let bytes = 0
  try {
    const file = await open(temp, 'w', 0o600)
    try {
      const {
        accounts,
        api_keys,
        customers,
        tokens,
        idempotency_keys = [],
        ...head
      } = data
      // @note One record per line and one buffer per ~1 MB: no single string
      // ever holds the whole state, so no state is too large to write.
      let chunk = `${JSON.stringify({ ...head, accounts: [], api_keys: [], customers: [], tokens: [] })}\n`
      const flushChunk = async (): Promise<void> => {
        const buffer = Buffer.from(chunk)
        chunk = ''
        await writeAll(file, buffer)
        bytes += buffer.length
      }
      for (const [kind, list] of [
        ['account', accounts],
        ['api_key', api_keys],
        ['customer', customers],
        ['token', tokens],
        ['idempotency_key', idempotency_keys],
      ] as const) {
        for (const record of list) {
          chunk += `{"${kind}":${JSON.stringify(record)}}\n`
          if (chunk.length >= 1 << 20) await flushChunk()
        }
      }
      await flushChunk()
      await file.sync()
    } finally {
      await file.close()
    }
    await rename(temp, path)
  } catch (error) {
    await unlink(temp).catch(() => {})
    throw error
  }
  // @note Persist the rename itself; some file systems refuse to open a folder.
  const folder = await open(dirname(path), 'r').catch(() => undefined)
  if (folder) {
    await folder.sync().catch(() => {})
    await folder.close()
  }
  return bytes
}

/** Writes all of `buffer` at the end of `file`: a full disk writes part of it, then fails. */
async function writeAll(file: FileHandle, buffer: Buffer): Promise<void> {
  let offset = 0
  while (offset < buffer.length) {
    const { bytesWritten } = await file.write(
      buffer,
      offset,
      buffer.length - offset,
    )
    offset += bytesWritten
  }
}

/**
 * Removes the temporary files that killed processes left beside `path`
 * (`.<name>.<pid>.tmp`). Call it while holding the lock: no other writer of
 * this file is running then. Returns how many it removed.
 *
 * @example
 * await removeStaleTempFiles('sandbox.json')
 */
export async function removeStaleTempFiles(path: string): Promise<number> {
  const name = basename(path)
  const pattern = new RegExp(
    `^\\.${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.(lock\\.)?(\\d+)\\.tmp$`,
  )
  const entries = await readdir(dirname(path)).catch(() => [] as string[])
  let removed = 0
  for (const entry of entries) {
    const match = pattern.exec(entry)
    // Another server may be creating its lock right now: spare a live one.
    if (!match || (match[1] && isRunning(Number(match[2])))) continue
    await unlink(join(dirname(path), entry)).then(
      () => removed++,
      () => {},
    )
  }
  return removed
}

// The lock files this process holds: a lock with our pid that is not among
// them was left by a killed server that had our pid before us.
const heldLocks = new Set<string>()

/**
 * How often a server refreshes its lock's modification time (its heartbeat),
 * in milliseconds.
 */
const LOCK_HEARTBEAT_MS = 2_000

/**
 * How old a lock's heartbeat must be before a server in another PID
 * namespace (another container) or on another host takes it over, in
 * milliseconds: such a server cannot see the holder's process, only that
 * the holder stopped refreshing its lock.
 */
const LOCK_STALE_AFTER_MS = 10_000

/** Who holds a lock, as its content says. */
interface LockHolder {
  pid: number
  /**
   * Where `pid` means something: host name, PID namespace and boot, or
   * `undefined` for a lock of an older server, which held only its pid.
   */
  place: string | undefined
  host: string | undefined
  /** When it was taken (ms), if the lock says so. */
  since: number | undefined
  /** Its last heartbeat (ms): the lock's modification time. */
  beat: number
}

/**
 * Where this process's pid means something: its host name, its PID
 * namespace (`/proc/self/ns/pid`; two containers both have a pid 1) and the
 * boot of its machine (a lock from before a reboot names a pid of then).
 * `-` stands for what this system does not show.
 */
function ownPlace(): string {
  const read = (reader: () => string): string => {
    try {
      return reader().trim() || '-'
    } catch {
      return '-'
    }
  }
  // @note Cut short so that the whole lock fits a symbolic link's inode (on
  // a full disk); the boot id, not the name, tells machines apart.
  const host = hostname().replace(/\s+/g, '_').slice(0, 16) || '-'
  const namespace = read(() => readlinkSync('/proc/self/ns/pid')).replace(
    /^pid:\[(\d+)\]$/,
    '$1',
  )
  const boot = read(() =>
    readFileSync('/proc/sys/kernel/random/boot_id', 'utf8'),
  ).slice(0, 8)
  return `${host} ${namespace} ${boot}`
}

/** A held `<file>.lock`. */
export interface DataFileLock {
  /** Removes the lock file if it is still ours. */
  release(): Promise<void>
}

/**
 * Takes `<path>.lock`, so that only one server writes a data file. The lock
 * holds `<pid> <host> <pid namespace> <boot id> <since>`, and its holder
 * touches it every {@link LOCK_HEARTBEAT_MS}. A lock whose holder is no longer
 * running is taken over: at once where its pid can be checked (this host and
 * PID namespace), else once its heartbeat is older than
 * {@link LOCK_STALE_AFTER_MS}. Throws a `DataFileError` naming the file and
 * the holder when another process holds it.
 *
 * @example
 * const lock = await lockDataFile('sandbox.json')
 * await lock.release()
 */
export async function lockDataFile(path: string): Promise<DataFileLock> {
  const lockPath = `${path}.lock`
  const temp = join(dirname(path), `.${basename(path)}.lock.${process.pid}.tmp`)
  const place = ownPlace()
  const token = `${process.pid} ${place} ${Math.floor(Date.now() / 1000)}`
  // @note On a full disk no file can hold the token: the lock is then a
  // symbolic link whose target is the token, which needs no data block (a
  // short one lives in the inode) and is made in one step too, so a server
  // restarts there (read-only).
  const full = await writeFile(temp, token).then(
    () => false,
    async (error: NodeJS.ErrnoException) => {
      await unlink(temp).catch(() => {})
      if (OUT_OF_SPACE.has(error.code ?? '')) return true
      throw cannotLock(path, lockPath, error)
    },
  )
  for (let attempt = 0; ; attempt++) {
    try {
      // @note link() and symlink() fail if the lock exists, and never show
      // a lock without its content, as open(O_EXCL) followed by a write would.
      if (full) await symlink(token, lockPath)
      else await link(temp, lockPath)
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        await unlink(temp).catch(() => {})
        throw cannotLock(path, lockPath, error as NodeJS.ErrnoException)
      }
    }
    const holder = await lockHolder(lockPath)
    if (
      attempt < 400 &&
      (holder === undefined || !isLive(holder, place, lockPath))
    ) {
      // The holder died without releasing it (kill -9): take it over.
      if (holder !== undefined) {
        await takeOver(lockPath, place, token).catch(async (error) => {
          await unlink(temp).catch(() => {})
          throw cannotLock(path, lockPath, error as NodeJS.ErrnoException)
        })
      }
      continue
    }
    await unlink(temp).catch(() => {})
    throw inUse(path, holder, place, lockPath)
  }
  await unlink(temp).catch(() => {})
  let released = false
  heldLocks.add(resolvePath(lockPath))
  const ours = async (): Promise<boolean> =>
    (await lockText(lockPath)) === token
  // @note A server in another container cannot see this process: the lock's
  // modification time, refreshed here, is how it knows we still run.
  // Unref'd: the heartbeat keeps no process alive.
  const heartbeat = setInterval(() => {
    void ours()
      .then(async (still) => {
        if (!still) return clearInterval(heartbeat)
        const now = new Date()
        await lutimes(lockPath, now, now)
      })
      .catch(() => {})
  }, LOCK_HEARTBEAT_MS)
  heartbeat.unref()
  const lock: DataFileLock = {
    async release() {
      if (released) return
      released = true
      clearInterval(heartbeat)
      // @note The whole token, not the pid: a server in another container
      // may have our pid, and a lock it took over is not ours to remove.
      if (await ours()) await unlink(lockPath).catch(() => {})
      heldLocks.delete(resolvePath(lockPath))
    },
  }
  try {
    await refuseOtherNames(path, place)
  } catch (error) {
    await lock.release()
    throw error
  }
  return lock
}

/**
 * How long a takeover of a dead server's lock may hold its guard
 * (`<file>.lock.takeover`) before another server judges that taker dead
 * too, in milliseconds: a takeover takes a few file operations.
 */
const TAKEOVER_STALE_AFTER_MS = 5_000

/**
 * Removes a dead server's lock, under a guard that one server at a time
 * holds, after judging the lock dead again there.
 * @note Servers that start together all find the dead lock: each removing
 * what it found could remove the lock another had just made, and two
 * servers would then write one file. Under the guard the lock found is the
 * one removed; the others find the new holder's lock alive and are refused.
 */
async function takeOver(
  lockPath: string,
  place: string,
  token: string,
): Promise<void> {
  const guard = `${lockPath}.takeover`
  try {
    // A symbolic link, as on a full disk: made whole in one step.
    await symlink(token, guard)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    const since = await lstat(guard).then(
      (info) => info.mtimeMs,
      () => undefined,
    )
    // A taker killed in the middle left its guard: it is removed once old.
    if (since !== undefined && Date.now() - since > TAKEOVER_STALE_AFTER_MS)
      await unlink(guard).catch(() => {})
    else await sleep(20)
    return
  }
  try {
    const holder = await lockHolder(lockPath)
    if (holder !== undefined && !isLive(holder, place, lockPath))
      await unlink(lockPath).catch(() => {})
  } finally {
    await unlink(guard).catch(() => {})
  }
}

/** The content of a lock: the target of its link, or the content of its file. */
async function lockText(lockPath: string): Promise<string | undefined> {
  return readlink(lockPath).catch(() =>
    readFile(lockPath, 'utf8').catch(() => undefined),
  )
}

/**
 * Who holds a lock, or `undefined` when it is gone. A lock of an older
 * server holds its pid alone (0 when it names none).
 */
async function lockHolder(lockPath: string): Promise<LockHolder | undefined> {
  const [text, info] = await Promise.all([
    lockText(lockPath),
    lstat(lockPath).catch(() => undefined),
  ])
  if (text === undefined || info === undefined) return undefined
  const [pid = '', host, namespace, boot, since, ...rest] = text
    .trim()
    .split(' ')
  const complete = since !== undefined && rest.length === 0
  return {
    pid: Number(pid),
    place: complete ? `${host} ${namespace} ${boot}` : undefined,
    host: complete ? host : undefined,
    since: complete && since ? Number(since) * 1000 : undefined,
    beat: info.mtimeMs,
  }
}

/**
 * Whether a lock's holder may still run. Where its pid is ours to check (the
 * same host, PID namespace and boot, or an older lock that says nothing of
 * them): whether that pid runs, and is not this process unless this process
 * took this lock. Elsewhere: whether its heartbeat is recent.
 */
function isLive(holder: LockHolder, place: string, lockPath: string): boolean {
  if (holder.place !== undefined && holder.place !== place)
    return Date.now() - holder.beat <= LOCK_STALE_AFTER_MS
  // @note Containers hand out the same small pids again: a lock with our
  // pid that this process does not hold is a killed server's (a container
  // restarted in the same namespace).
  if (holder.pid === process.pid) return heldLocks.has(resolvePath(lockPath))
  return isRunning(holder.pid)
}

// What the folder of a data file lacks, by the code of a failed create.
const FOLDER_FAULTS: Record<string, string> = {
  EACCES: 'is not writable by this user',
  EPERM: 'is not writable by this user',
  EROFS: 'is on a read-only file system',
  ENOENT: 'does not exist',
  ENOTDIR: 'is not a folder',
}

/**
 * Why the lock of `path` cannot be made, in the user's terms: what its
 * folder lacks, not which file of ours the system refused.
 */
function cannotLock(
  path: string,
  lockPath: string,
  error: NodeJS.ErrnoException,
): DataFileError {
  const fault = FOLDER_FAULTS[error.code ?? '']
  if (fault === undefined) {
    return new DataFileError(
      `Cannot create the lock file ${lockPath}: ${error.message}`,
    )
  }
  const folder = dirname(path)
  return new DataFileError(
    (naming) =>
      `The data file ${path} cannot be used: its folder ${folder} ${fault} (${error.code}). The server writes its lock (${basename(lockPath)}) and each save of the data beside the file, so the folder must exist and be writable: ${error.code === 'ENOENT' || error.code === 'ENOTDIR' ? 'create it' : 'make it writable'}, or give ${naming.name('dataFile')} a path in a folder that is.`,
  )
}

/** Why a data file is refused while `holder` holds its lock, and what to do. */
function inUse(
  path: string,
  holder: LockHolder | undefined,
  place: string,
  lockPath: string,
): DataFileError {
  const pid = holder?.pid || 'unknown'
  const since =
    holder?.since === undefined
      ? ''
      : ` since ${new Date(holder.since).toISOString()}`
  if (holder?.place === undefined || holder.place === place) {
    return new DataFileError(
      (naming) =>
        `The data file ${path} is in use by another sandbox server (pid ${pid}, lock file ${lockPath})${since}. Stop that server, or give ${naming.name('dataFile')} another path. If pid ${pid} is not a sandbox server, delete ${lockPath}: a killed server left it.`,
    )
  }
  const [host, namespace] = holder.place.split(' ')
  const [ownHost, ownNamespace] = place.split(' ')
  const where =
    host !== ownHost
      ? `on host ${host}`
      : namespace !== ownNamespace
        ? `in another PID namespace (another container) on host ${host}`
        : `on another machine named ${host}`
  const age = Math.max(0, Math.round((Date.now() - holder.beat) / 1000))
  return new DataFileError(
    (naming) =>
      `The data file ${path} is in use by another sandbox server (pid ${pid} ${where}, lock file ${lockPath})${since}, which refreshed its lock ${age} s ago. Stop that server, or give ${naming.name('dataFile')} another path. If it is gone, its lock is taken over ${LOCK_STALE_AFTER_MS / 1000} s after its last refresh: start this server again then.`,
  )
}

/**
 * Refuses a data file that has more than one name (hard links): each has a
 * lock of its own, so a server could start on each. Nor can such a file stay
 * shared: every save writes a new file and renames it over `path`, which
 * parts it from its other names. Throws a `DataFileError`: "in use" when a
 * server holds another name in the same folder, else what to do.
 */
async function refuseOtherNames(path: string, place: string): Promise<void> {
  const file = await stat(path).catch(() => undefined)
  // A folder counts its subfolders' links: the read says it is no file.
  if (file === undefined || !file.isFile() || file.nlink <= 1) return
  // @note Another name beside it with a live lock is the common case (`ln
  // a.json b.json`): say who holds it, as for the one name.
  const folder = dirname(path)
  const entries = await readdir(folder).catch(() => [] as string[])
  const names = new Set(entries)
  for (const entry of entries) {
    const name = entry.slice(0, -'.lock'.length)
    if (!entry.endsWith('.lock') || !names.has(name)) continue
    const other = join(folder, name)
    if (other === path) continue
    const same = await lstat(other).catch(() => undefined)
    if (same?.ino !== file.ino || same.dev !== file.dev) continue
    const lockPath = join(folder, entry)
    const holder = await lockHolder(lockPath)
    if (holder !== undefined && isLive(holder, place, lockPath))
      throw inUse(path, holder, place, lockPath)
  }
  throw new DataFileError(
    `The data file ${path} has ${file.nlink} names (hard links); it was left untouched. Each name would get a lock of its own, so a second server could write the same data through another name, and each save replaces the file by a new one, which parts it from its other names. Give it one name: remove the others (find them with find / -xdev -samefile ${path}), or make them symbolic links (ln -s), which lead to the one file and its one lock.`,
  )
}

/**
 * Whether `pid` is a live process. @note A process killed with SIGKILL
 * stays in the process table as a zombie until its parent reaps it, for
 * good under a PID 1 that never reaps (a container's shell), and
 * `kill(pid, 0)` still finds it: where `/proc` shows the process's state,
 * a zombie (`Z`) or a dying process (`X`) counts as dead.
 */
function isRunning(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
  } catch (error) {
    // EPERM: it runs, as another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  return !isDead(processState(pid))
}

const isDead = (state: string | undefined): boolean =>
  state === 'Z' || state === 'X' || state === 'x'

/**
 * The state letter of `pid` in `/proc/<pid>/stat` (`R`, `S`, `Z`, …), or
 * `undefined` where there is no `/proc`. The name before it is in
 * parentheses and may hold spaces and `)`: the state follows the last `)`.
 */
function processState(pid: number): string | undefined {
  let line: string
  try {
    line = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  return line.slice(line.lastIndexOf(')') + 2)[0]
}

/**
 * The storage error of a data file replaced, removed or changed by another
 * program while the server ran (`DATA_FILE_REPLACED`).
 */
const replacedError = (): Error =>
  Object.assign(
    new Error(
      'The data file was replaced, removed or changed by another program while the server ran, so the server stopped writing it: restart the server to load the file now there, or move its file back.',
    ),
    { code: 'DATA_FILE_REPLACED' },
  )

/** What a completed snapshot (compaction) of the data file reports. */
export interface FlushInfo {
  /** Wall-clock ms when the state was taken: every write acknowledged before it is in the file. */
  snapshotAt: number
  customers: number
  tokens: number
  bytes: number
}

/**
 * The append-only data file of a running server: a `Store` whose `commit`
 * appends one line (a record, the key that replays it, or both; an account
 * and its key; the clocks or scenarios an admin call set; a queued scenario
 * a call took) and fdatasyncs
 * it, writes during one sync sharing the next, and whose `saveState`
 * rewrites the file whole (a compaction).
 */
export interface DataFileLog extends Store {
  /** Writes a last snapshot (a failure goes to `onError`) and closes the file. */
  close(): Promise<void>
}

/** What the data file is a log of: the sandbox's state, to snapshot. */
export interface DataFileSource {
  /** The whole state: the data format's, with the keys and scenarios beside it. */
  dump(): SandboxData & DurableExtras
  /** Settles once no seeding is under way, even one a reset started meanwhile. */
  settled(): Promise<void>
}

interface Pending {
  /** A write's line, or `undefined` for a snapshot. */
  line: Buffer | undefined
  undo: (() => void) | undefined
  /**
   * Whether the line is an admin change (clocks, scenarios, an account and
   * its key): counted towards the next snapshot, and, without an `undo`,
   * kept in memory when it is not stored, the file then lagging behind.
   */
  kept: boolean
  resolve: () => void
  reject: (error: Error) => void
}

/**
 * Opens the data file for appending, after writing a fresh snapshot of the
 * sandbox to it (which also drops whatever a crash cut short). Every write
 * then is a line appended and fdatasync'ed before its promise resolves; the
 * writes that arrive during one sync share the next (group commit), so a
 * write costs the same however large the file is. A failed append is cut off
 * again (truncated to the last good length).
 *
 * @example
 * const log = await openDataFileLog('sandbox.json', source)
 * await log.commit({ created: { customer: record } }, () => db.remove({ customer: record }))
 */
export async function openDataFileLog(
  path: string,
  source: DataFileSource,
  options: {
    onFlush?: (info: FlushInfo) => void
    onError?: (error: Error) => void
  } = {},
): Promise<DataFileLog> {
  let handle: FileHandle | undefined
  let size = 0
  let fault: StorageFault | undefined
  // Whether the file may lag behind memory (a failed snapshot, a failed
  // truncation): the next write is then a whole snapshot, not a line.
  let stale = false
  // Whether a snapshot is due (past MAX_CHANGES_BETWEEN_STATES admin
  // lines) though the file holds what memory does: one that does not fit
  // leaves the lines to be appended.
  let due = false
  const queue: Pending[] = []
  let running: Promise<void> | undefined
  // Admin changes appended since the last snapshot.
  let changes = 0
  // Whether another program wrote the file this log appends to: it then
  // holds what this log did not write, and is never written again.
  let foreign = false

  /**
   * Throws `DATA_FILE_REPLACED` when the file at `path` is no longer the one
   * this log appends to and holds what it wrote: renamed over or removed
   * (the handle's file has no name there), or, for an append (`whole`
   * false), grown or cut by another program (its size is not the log's).
   * @note A write stored there would be lost on restart, or land in a file
   * the operator put in place: nothing is written until the file is back,
   * and no snapshot replaces the operator's file.
   */
  const checkFile = async (whole: boolean): Promise<void> => {
    if (handle === undefined) return
    const [own, there] = await Promise.all([
      handle.stat({ bigint: true }),
      stat(path, { bigint: true }).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined
        throw error
      }),
    ])
    if (!whole && own.size !== BigInt(size)) foreign = true
    const moved =
      there === undefined ||
      own.nlink === 0n ||
      there.ino !== own.ino ||
      there.dev !== own.dev
    if (moved || foreign) throw replacedError()
  }

  const compact = async (): Promise<number> => {
    const snapshotAt = Date.now()
    const data = source.dump()
    stale = true
    due = false
    changes = 0
    const bytes = await writeSnapshot(path, data)
    // @note The old handle points at the file the rename replaced: closed
    // first, so that an open that fails leaves none to take for a file
    // replaced behind the server's back (the next write snapshots again).
    await handle?.close().catch(() => {})
    handle = undefined
    handle = await open(path, 'a')
    size = bytes
    stale = false
    options.onFlush?.({
      snapshotAt,
      customers: data.customers.length,
      tokens: data.tokens.length,
      bytes,
    })
    return bytes
  }

  const noteFault = (error: Error): void => {
    const code = (error as NodeJS.ErrnoException).code ?? 'EIO'
    // Told once per outage, not once per refused write.
    if (fault === undefined) options.onError?.(error)
    fault = {
      code,
      // The health check is open to anyone: no paths of this machine in it.
      message: error.message.replace(/,? '[^']*'(?: -> '[^']*')?/g, ''),
      since: fault?.since ?? new Date().toISOString(),
    }
  }

  try {
    await compact()
  } catch (error) {
    await handle?.close().catch(() => {})
    handle = undefined
    // @note A full disk is an outage, not a broken file: the server starts
    // on the data it read, refuses writes with 503 until a compaction fits
    // (the first write after space returns), and the old file stays whole.
    if (!OUT_OF_SPACE.has((error as NodeJS.ErrnoException).code ?? '')) {
      throw new DataFileError(
        `Cannot write the data file ${path}: ${(error as Error).message}`,
      )
    }
    stale = true
    noteFault(error as Error)
  }

  const fail = (batch: Pending[], error: Error): void => {
    noteFault(error)
    // The next write is then a whole snapshot, which holds the change.
    if (batch.some((entry) => entry.kept && !entry.undo)) stale = true
    // @note Undo every record and admin change before anything else is
    // written, so that no later snapshot can hold a write that was refused;
    // the latest first, as each put back what came before it.
    for (const entry of batch.toReversed()) entry.undo?.()
    for (const entry of batch) entry.reject(error)
  }

  /** Appends the lines of `batch`, synced: all of them, or none. */
  const appendLines = async (batch: Pending[]): Promise<void> => {
    const buffer = Buffer.concat(batch.map((entry) => entry.line!))
    try {
      await writeAll(handle!, buffer)
      await handle!.datasync()
    } catch (error) {
      // @note Never leave half a line behind: the next append would
      // glue onto it and make the file unreadable.
      await handle!.truncate(size).catch(() => {
        stale = true
      })
      throw error
    }
    size += buffer.length
    // @note Checked again once stored: a file replaced meanwhile got
    // these lines, which no restart reads. They are refused, and were
    // the file put back, a snapshot would replace it, without them.
    await checkFile(false).catch((error: Error) => {
      stale = true
      throw error
    })
    // @note Admin lines add nothing to the data, so they alone do not
    // grow the file without end: past a bound, the next write is a
    // snapshot that holds them.
    changes += batch.filter((entry) => entry.kept).length
    if (changes >= MAX_CHANGES_BETWEEN_STATES) due = true
  }

  const drain = async (): Promise<void> => {
    while (queue.length > 0) {
      const wholeNow = () =>
        stale || due || queue.some((entry) => entry.line === undefined)
      try {
        // @note Checked before the batch is taken, not between it and a
        // snapshot's dump: a create that lands while the file is checked
        // would be in the dump and, its line queued after the batch, in
        // the file a second time, which no restart could read.
        await checkFile(wholeNow())
      } catch (error) {
        fail(queue.splice(0), error as Error)
        continue
      }
      const whole = wholeNow()
      // A snapshot waits for a reset's seeding to finish.
      if (whole) await source.settled()
      // @note Taken in the same tick as a snapshot's dump: every record in
      // memory is then in the file already, in this batch, or, made by a
      // create whose line is not queued yet, in the file twice, which
      // readDataFile keeps once.
      const batch = queue.splice(0)
      // Only due: the file holds what memory does, and the batch its lines.
      const onlyDue = !stale && batch.every((entry) => entry.line !== undefined)
      try {
        if (whole) {
          // The snapshot holds the batch's records too.
          await compact().catch(async (error: NodeJS.ErrnoException) => {
            // @note A snapshot that did not fit (written aside, then
            // renamed) left the file whole and this log's handle on it: the
            // lines go on, where every write had waited for room for a
            // whole snapshot (about the file's size), free space or not.
            // The next is tried after as many admin lines again.
            if (
              !onlyDue ||
              handle === undefined ||
              !OUT_OF_SPACE.has(error.code ?? '')
            )
              throw error
            stale = false
            await appendLines(batch)
          })
        } else {
          await appendLines(batch)
        }
      } catch (error) {
        fail(batch, error as Error)
        continue
      }
      fault = undefined
      for (const entry of batch) entry.resolve()
    }
  }

  const kick = (): void => {
    running ??= drain().then(
      () => {
        running = undefined
        // @note A write queued after the loop's last look and before this
        // ran found it running: it would wait for the next write to come.
        if (queue.length > 0) kick()
      },
      (error: unknown) => {
        running = undefined
        throw error
      },
    )
  }

  const enqueue = (
    line: Buffer | undefined,
    undo: (() => void) | undefined,
    kept = false,
  ): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      queue.push({ line, undo, kept, resolve, reject })
      kick()
    })

  return {
    kind: 'file',
    outage: {
      where: 'in its data file',
      until: 'the data file can be written again',
      code: 'EIO',
      kept: 'it is made in memory but not stored. The data file stores it with the next write that succeeds, and it is lost if the server stops before then',
    },
    commit({ created, idempotencyKey, taken, added, set }, undo) {
      const line = {
        ...created,
        ...added,
        ...(idempotencyKey && { idempotency_key: idempotencyKey }),
        ...(set && { set }),
        ...(taken && { taken }),
      }
      // @note A take stays in memory when its line is not stored (the call
      // has its fault already), as a clock move does: an admin change.
      const kept = added !== undefined || set !== undefined || !!taken
      return enqueue(Buffer.from(`${JSON.stringify(line)}\n`), undo, kept)
    },
    saveState: () => enqueue(undefined, undefined),
    fault: () => fault,
    async close() {
      // A failure was reported already, once per outage.
      await enqueue(undefined, undefined).catch(() => {})
      await handle?.close().catch(() => {})
      handle = undefined
    },
  }
}
