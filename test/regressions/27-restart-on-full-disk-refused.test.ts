// Runs once: every server here names its own store.
import { readFile, readlink } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { createFiller, startCli, tempDataFile } from '../_servers.ts'

// A server restarted on a full disk refused to start: its first act is to
// compact the data file, which needs room. It now starts read-only on the
// data it read: reads and the admin surface answer, writes are 503 until one
// fits, and the file is left as it was.

// Under `ulimit -f` every write past the size fails with EFBIG, as ENOSPC
// does on a full disk (see 14-disk-full-with-data-file).
const LIMIT_KB = 48

it(
  'starts read-only on a data file it cannot compact, and writes again once one fits',
  { timeout: 30_000 },
  async () => {
    const file = await tempDataFile('cts-full-restart-')
    const args = ['--port', '0', '--quiet', '--data-file', file]
    const roomy = await startCli([...args, '--customers', '200'])
    expect(await roomy.stop()).toBe(0)
    const before = await readFile(file, 'utf8')
    expect(before.length).toBeGreaterThan(LIMIT_KB * 1024)

    const full = await startCli(args, { fileSizeLimitKb: LIMIT_KB })
    const health = await fetch(`${full.url}/__sandbox/health`)
    expect(health.status).toBe(503)
    expect(await health.json()).toMatchObject({
      status: 'degraded',
      storage: { code: 'EFBIG' },
    })
    const state = (await (
      await fetch(`${full.url}/__sandbox/state`)
    ).json()) as { customers: unknown[] }
    expect(state.customers.length).toBeGreaterThanOrEqual(200)

    const refused = await createFiller(full.url, 1)
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('5')
    expect(((await refused.json()) as { code: string }).code).toBe(
      'storage_unavailable',
    )
    expect(await readFile(file, 'utf8')).toBe(before)

    // A reset leaves a snapshot small enough to fit: writes are back.
    const reset = await fetch(`${full.url}/__sandbox/reset`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({}),
    })
    expect(reset.status).toBe(200)
    expect((await fetch(`${full.url}/__sandbox/health`)).status).toBe(200)
    expect((await createFiller(full.url, 2)).status).toBe(201)
    expect(await full.stop()).toBe(0)
    expect(full.stderr()).toMatch(/Failed to write the data file .*EFBIG/)
  },
)

it(
  'starts on a disk with no room for its lock file, holding the lock all the same',
  { timeout: 30_000 },
  async () => {
    const file = await tempDataFile('cts-full-lock-')
    const args = ['--port', '0', '--quiet', '--data-file', file]
    const roomy = await startCli([...args, '--customers', '5'])
    expect(await roomy.stop()).toBe(0)
    const before = await readFile(file, 'utf8')

    // Not a byte may be written: the pid no more than the data.
    const full = await startCli(args, { fileSizeLimitKb: 0 })
    expect((await fetch(`${full.url}/__sandbox/health`)).status).toBe(503)
    expect((await readlink(`${file}.lock`)).split(' ')[0]).toBe(
      String(full.child.pid),
    )
    const second = await startCli(args).catch((error: Error) => error)
    expect(String(second)).toMatch(/in use by another sandbox server/)
    expect((await createFiller(full.url, 1)).status).toBe(503)
    expect(await full.stop()).toBe(0)
    await expect(readlink(`${file}.lock`)).rejects.toThrow(/ENOENT/)
    expect(await readFile(file, 'utf8')).toBe(before)
  },
)
