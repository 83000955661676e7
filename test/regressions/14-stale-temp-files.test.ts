import { spawnSync } from 'node:child_process'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import {
  createSandboxServer,
  type SandboxServer,
} from '../../src/runtimes/node.ts'

const folders: string[] = []
const servers: SandboxServer[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
  for (const folder of folders.splice(0))
    await rm(folder, { recursive: true, force: true })
})

it('removes the temporary files that killed servers left beside the data file, and only those', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'cts-temp-'))
  folders.push(folder)
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

  const server = await createSandboxServer({
    port: 0,
    playground: false,
    dataFile: file,
  })
  servers.push(server)
  expect((await readdir(folder)).toSorted()).toEqual([
    `.data.json.lock.${process.ppid}.tmp`,
    '.other.json.123.tmp',
    'data.json',
    'data.json.lock',
    'notes.txt',
  ])
})
