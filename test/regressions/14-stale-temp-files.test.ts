// Runs once: every server here names its own store.
import { spawnSync } from 'node:child_process'
import { readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { startServer, tempFolder } from '../_servers.ts'

it('removes the temporary files that killed servers left beside the data file, and only those', async () => {
  const folder = await tempFolder('cts-temp-')
  const file = join(folder, 'data.json')
  for (const pid of [123, 4567, 890123]) {
    await writeFile(join(folder, `.data.json.${pid}.tmp`), 'x'.repeat(100_000))
  }
  // A lock being taken by a process that is gone, and one by a live process.
  const dead = spawnSync(process.execPath, ['-e', '']).pid
  await writeFile(join(folder, `.data.json.lock.${dead}.tmp`), String(dead))
  await writeFile(join(folder, `.data.json.lock.${process.ppid}.tmp`), '')
  await writeFile(join(folder, '.other.json.123.tmp'), 'not ours')
  await writeFile(join(folder, 'notes.txt'), 'not ours')

  await startServer({ dataFile: file })
  expect((await readdir(folder)).toSorted()).toEqual([
    `.data.json.lock.${process.ppid}.tmp`,
    '.other.json.123.tmp',
    'data.json',
    'data.json.lock',
    'notes.txt',
  ])
})
