// Runs once: every server here names its own store.
import { link, mkdir, readFile, stat, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { readDataFile } from '../../src/model/data-file.ts'
import {
  createNamed,
  runCli,
  startCli,
  startServer,
  tempFolder,
} from '../_servers.ts'

// A hard link is a second name of the same file: `<name>.lock` beside each
// name let a server start on each, and their data parted.

const args = (file: string) => ['--port', '0', '--quiet', '--data-file', file]

it('refuses a second server on a hard link to the file a server holds, naming the holder', async () => {
  const folder = await tempFolder('cts-hardlink-')
  const file = join(folder, 'a.json')
  const other = join(folder, 'b.json')
  const first = await startCli(args(file))
  await link(file, other)
  const before = await readFile(other, 'utf8')

  const second = runCli(args(other))
  expect(await second.exited).toBe(1)
  const lines = second.stderr().trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toContain(`${other} is in use by another sandbox server`)
  expect(lines[0]).toContain(`pid ${first.child.pid}`)
  expect(lines[0]).toContain(`${file}.lock`)
  expect(second.stdout()).not.toContain('http://')
  // Nothing was written through the second name, and it left no lock.
  expect(await readFile(other, 'utf8')).toBe(before)
  await expect(stat(`${other}.lock`)).rejects.toThrow(/ENOENT/)

  // The first server goes on storing its writes in its file.
  const response = await createNamed(first.url, 'Kept')
  expect(response.status).toBe(201)
  const { id } = (await response.json()) as { id: string }
  expect(await first.stop()).toBe(0)
  const data = (await readDataFile(file)) as { customers: { id: string }[] }
  expect(data.customers.map((c) => c.id)).toContain(id)
})

it('refuses a data file with another name even when no server holds it, and starts once it has one', async () => {
  const folder = await tempFolder('cts-hardlink-')
  const file = join(folder, 'a.json')
  const other = join(folder, 'b.json')
  const first = await startServer({ dataFile: file })
  await first.close()
  await link(file, other)
  const before = await readFile(file, 'utf8')

  const refused = startServer({ dataFile: file })
  await expect(refused).rejects.toThrow(
    `The data file ${file} has 2 names (hard links)`,
  )
  await expect(refused).rejects.toThrow('ln -s')
  // Left as it was: both names, the same content, no lock.
  expect((await stat(file)).nlink).toBe(2)
  expect(await readFile(other, 'utf8')).toBe(before)
  await expect(stat(`${file}.lock`)).rejects.toThrow(/ENOENT/)

  await unlink(other)
  const again = await startServer({ dataFile: file })
  expect(again.loadedFromFile).toBe(true)
})

it('refuses a second server in the same process on a hard link, as on the one name', async () => {
  const folder = await tempFolder('cts-hardlink-')
  const file = join(folder, 'a.json')
  const other = join(folder, 'b.json')
  await startServer({ dataFile: file })
  await link(file, other)
  await expect(startServer({ dataFile: other })).rejects.toThrow(
    `in use by another sandbox server (pid ${process.pid}, lock file ${file}.lock)`,
  )
})

it('still calls a folder given as the data file no regular file, not a file with hard links', async () => {
  const folder = join(await tempFolder('cts-hardlink-'), 'data.json')
  await mkdir(folder)
  await expect(startServer({ dataFile: folder })).rejects.toThrow(
    `${folder} is not a regular file`,
  )
})
