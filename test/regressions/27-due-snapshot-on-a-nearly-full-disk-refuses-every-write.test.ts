// Runs once: every server here names its own store.
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm, statfs, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it, onTestFinished } from 'vitest'
import { MAX_CHANGES_BETWEEN_STATES } from '../../src/model/store.ts'
import { createFiller, postJson, startServer } from '../_servers.ts'

// Found by attacking the server from outside, on a small disk: after
// MAX_CHANGES_BETWEEN_STATES admin lines, the data file's next write is a
// fresh snapshot, written aside and renamed over the file. On a disk with
// less room than the file's size, that snapshot did not fit, and from then
// on every write, creates included, was a snapshot again and answered 503
// (ENOSPC), with room left for thousands of lines. The old file is whole
// after a snapshot that did not fit: the lines are appended to it now.

/** A tmpfs of `kb` KiB of its own (the tests run as root), gone with the test. */
async function smallDisk(kb: number): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'cts-small-disk-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${kb}k`, 'tmpfs', folder])
  onTestFinished(async () => {
    execFileSync('umount', ['-l', folder])
    await rm(folder, { recursive: true, force: true })
  })
  return folder
}

it(
  'appends its lines when a due snapshot does not fit, rather than refusing every write',
  { timeout: 60_000 },
  async () => {
    const disk = await smallDisk(1024)
    const dataFile = join(disk, 'data.json')
    const server = await startServer({
      seed: 1,
      customersPerAccount: 1500,
      dataFile,
    })
    const file = (await stat(dataFile)).size
    // Admin lines up to one short of a snapshot.
    for (let n = 1; n < MAX_CHANGES_BETWEEN_STATES; n++) {
      const moved = await postJson(server.url, '/__sandbox/clock', {
        advance_seconds: 1,
      })
      expect(moved.status).toBe(200)
    }
    // The disk filled but for half the file's size: room for lines, not for
    // a snapshot of the file.
    const { bavail, bsize } = await statfs(disk)
    const free = bavail * bsize
    await writeFile(
      join(disk, 'filler'),
      Buffer.alloc(free - Math.floor(file / 2)),
    )
    const left = await statfs(disk)
    expect(left.bavail * left.bsize).toBeLessThan(file)
    expect(left.bavail * left.bsize).toBeGreaterThan(file / 4)

    // The thousandth admin line makes a snapshot due; the writes after it
    // try one, which does not fit, and are appended.
    for (let n = 0; n < 3; n++) {
      const moved = await postJson(server.url, '/__sandbox/clock', {
        advance_seconds: 1,
      })
      expect(moved.status, await moved.clone().text()).toBe(200)
    }
    const created = await createFiller(server.url, 1)
    expect(created.status, await created.clone().text()).toBe(201)
    expect((await fetch(`${server.url}/__sandbox/health`)).status).toBe(200)

    // Everything answered is in the file: a restart on it holds it.
    const { id } = (await created.json()) as { id: string }
    const clock = (await (
      await fetch(`${server.url}/__sandbox/clock`)
    ).json()) as { now: string }
    await server.close()
    await rm(join(disk, 'filler'))
    const again = await startServer({
      seed: 1,
      customersPerAccount: 1500,
      dataFile,
    })
    const state = (await (
      await fetch(`${again.url}/__sandbox/state`)
    ).json()) as {
      customers: { id: string }[]
    }
    expect(state.customers.some((customer) => customer.id === id)).toBe(true)
    const after = (await (
      await fetch(`${again.url}/__sandbox/clock`)
    ).json()) as { now: string }
    expect(
      Math.abs(Date.parse(after.now) - Date.parse(clock.now)),
    ).toBeLessThan(60_000)
  },
)
