import { open, readFile, rename, unlink } from 'node:fs/promises'
import { dirname, basename, join } from 'node:path'
import type { SandboxCore } from './sandbox.ts'

/** A data file that cannot be used: the server refuses to start and leaves it untouched. */
export class DataFileError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'DataFileError'
  }
}

/**
 * Reads a data file: its parsed JSON, or `undefined` when there is none.
 * Throws a `DataFileError` for a file that is not JSON.
 *
 * @example
 * const data = await readDataFile('sandbox.json')
 */
export async function readDataFile(path: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new DataFileError(
      `Cannot read the data file ${path}: ${(error as Error).message}`,
    )
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new DataFileError(
      `The data file ${path} is not valid JSON (${(error as Error).message}); it was left untouched. Move it away or pass another --data-file.`,
    )
  }
}

/**
 * Writes `text` to `path` atomically: a temporary file beside it, fsync,
 * rename over the old one, fsync of the folder. A crash at any point leaves
 * either the old file or the new one, never a mix.
 *
 * @example
 * await writeFileAtomic('sandbox.json', JSON.stringify(sandbox.dump()))
 */
export async function writeFileAtomic(
  path: string,
  text: string,
): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`)
  const file = await open(temp, 'w', 0o600)
  try {
    await file.writeFile(text)
    await file.sync()
  } finally {
    await file.close()
  }
  try {
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
}

/** What a completed flush reports. */
export interface FlushInfo {
  /** Wall-clock ms when the state was taken: every write acknowledged before it is in the file. */
  snapshotAt: number
  customers: number
  tokens: number
  bytes: number
}

/** Keeps a data file no more than `maxDelayMs` behind the sandbox. */
export interface DataFileWriter {
  /** Notes a change; the file is written within `maxDelayMs`. */
  markDirty(): void
  /** Writes now if anything changed, and waits for it. */
  flush(): Promise<void>
}

/**
 * Creates the debounced, atomic writer of `--data-file`.
 *
 * @example
 * const writer = createDataFileWriter('sandbox.json', sandbox, { maxDelayMs: 200 })
 * writer.markDirty()
 */
export function createDataFileWriter(
  path: string,
  sandbox: SandboxCore,
  options: {
    maxDelayMs: number
    onFlush?: (info: FlushInfo) => void
    onError?: (error: Error) => void
  },
): DataFileWriter {
  let dirty = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let writing: Promise<void> | undefined

  const write = async (): Promise<void> => {
    while (dirty) {
      dirty = false
      await sandbox.ready
      const snapshotAt = Date.now()
      const data = sandbox.dump()
      const text = JSON.stringify(data)
      try {
        await writeFileAtomic(path, text)
        options.onFlush?.({
          snapshotAt,
          customers: data.customers.length,
          tokens: data.tokens.length,
          bytes: Buffer.byteLength(text),
        })
      } catch (error) {
        options.onError?.(error as Error)
      }
    }
  }

  const flush = (): Promise<void> => {
    if (timer) {
      clearTimeout(timer)
      timer = undefined
    }
    writing ??= write().finally(() => {
      writing = undefined
    })
    return writing
  }

  return {
    markDirty() {
      dirty = true
      timer ??= setTimeout(() => {
        timer = undefined
        void flush()
      }, options.maxDelayMs)
    },
    async flush() {
      // A write under way may have taken its snapshot before the last change.
      await writing
      if (dirty) await flush()
    },
  }
}
