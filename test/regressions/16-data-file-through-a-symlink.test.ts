// Runs once: every server here names its own store.
import { lstat, readFile, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { readDataFile } from '../../src/model/data-file.ts'
import { createNamed, startServer, tempFolder } from '../_servers.ts'

it('refuses a second server on a symlink to a data file that a server holds', async () => {
  const folder = await tempFolder('cts-link-')
  const file = join(folder, 'data.jsonl')
  const link = join(folder, 'link.jsonl')
  const first = await startServer({ dataFile: file })
  await symlink(file, link)

  await expect(startServer({ dataFile: link })).rejects.toThrow(
    `in use by another sandbox server (pid ${process.pid}`,
  )
  // The link still leads to the one file, and the first server's writes land there.
  expect((await lstat(link)).isSymbolicLink()).toBe(true)
  const response = await createNamed(first.url, 'Ada')
  expect(response.status).toBe(201)
  const { id } = (await response.json()) as { id: string }
  await first.close()
  const data = (await readDataFile(link)) as { customers: { id: string }[] }
  expect(data.customers.map((c) => c.id)).toContain(id)
})

it('keeps the data in the file a symlink names, and the symlink as it was', async () => {
  const folder = await tempFolder('cts-link-')
  const file = join(folder, 'data.jsonl')
  const link = join(folder, 'link.jsonl')
  // A dangling link: the file it names is created.
  await symlink('data.jsonl', link)

  const server = await startServer({ dataFile: link })
  const response = await createNamed(server.url, 'Grace')
  expect(response.status).toBe(201)
  const { id } = (await response.json()) as { id: string }
  await server.close()

  expect((await lstat(link)).isSymbolicLink()).toBe(true)
  expect(await readFile(file, 'utf8')).toContain(id)
  const again = await startServer({ dataFile: link })
  expect(again.loadedFromFile).toBe(true)
  expect(again.sandbox.customers.get(id)).toBeDefined()
})
