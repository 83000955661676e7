// Runs once: every server here names its own store.
import { existsSync } from 'node:fs'
import { readFile, rename, rm, writeFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { readDataFile } from '../../src/model/data-file.ts'
import { createNamed, startServer, tempDataFile } from '../_servers.ts'

// A data file replaced while its server ran (`cp backup f.new && mv f.new
// f`) or removed (`rm f`): the server went on appending to the file it had
// open, which no name led to any more, and answered 201 with health `ok`.
// Every one of those writes was gone at the next start.

/** The names of the customers a data file holds. */
const namesIn = async (file: string): Promise<string[]> => {
  const data = (await readDataFile(file)) as { customers: { name: string }[] }
  return data.customers.map((customer) => customer.name)
}

it('refuses writes with 503 once the data file was replaced, says why in the health check, and leaves the new file alone', async () => {
  const file = await tempDataFile('cts-replaced-')
  const server = await startServer({ seed: 1, dataFile: file })
  expect((await createNamed(server.url, 'before')).status).toBe(201)
  const backup = await readFile(file, 'utf8')
  expect((await createNamed(server.url, 'lost')).status).toBe(201)

  await writeFile(`${file}.new`, backup)
  await rename(`${file}.new`, file)
  const refused = await createNamed(server.url, 'after')
  expect(refused.status).toBe(503)
  expect(refused.headers.get('retry-after')).toBe('5')
  expect(await refused.json()).toMatchObject({
    code: 'storage_unavailable',
    detail: expect.stringContaining('DATA_FILE_REPLACED'),
  })
  const health = await fetch(`${server.url}/__sandbox/health`)
  expect(health.status).toBe(503)
  expect(await health.json()).toMatchObject({
    status: 'degraded',
    storage: {
      code: 'DATA_FILE_REPLACED',
      message: expect.stringContaining('restart the server'),
    },
  })
  // Taken back, as a write that could not be stored is.
  const state = (await (
    await fetch(`${server.url}/__sandbox/state`)
  ).json()) as { customers: { name: string }[] }
  expect(state.customers.map((c) => c.name)).not.toContain('after')

  await server.close()
  expect(await readFile(file, 'utf8')).toBe(backup)
  const restarted = await startServer({ seed: 1, dataFile: file })
  expect((await createNamed(restarted.url, 'again')).status).toBe(201)
  await restarted.close()
  const names = await namesIn(file)
  expect(names).toContain('before')
  expect(names).toContain('again')
  expect(names).not.toContain('after')
})

it('refuses writes once the data file was removed, and does not write it back', async () => {
  const file = await tempDataFile('cts-replaced-')
  const server = await startServer({ seed: 1, dataFile: file })
  expect((await createNamed(server.url, 'before')).status).toBe(201)
  await rm(file)
  expect((await createNamed(server.url, 'after')).status).toBe(503)
  expect((await fetch(`${server.url}/__sandbox/health`)).status).toBe(503)
  await server.close()
  expect(existsSync(file)).toBe(false)
})

it('refuses writes once another program wrote the data file in place', async () => {
  const file = await tempDataFile('cts-replaced-')
  const server = await startServer({ seed: 1, dataFile: file })
  const backup = await readFile(file, 'utf8')
  expect((await createNamed(server.url, 'before')).status).toBe(201)
  // `cp backup file`: the same file, truncated and written again.
  await writeFile(file, backup)
  expect((await createNamed(server.url, 'after')).status).toBe(503)
  await server.close()
  expect(await readFile(file, 'utf8')).toBe(backup)
})

it('writes again once the data file is moved back, and no refused write comes back', async () => {
  const file = await tempDataFile('cts-replaced-')
  const server = await startServer({ seed: 1, dataFile: file })
  expect((await createNamed(server.url, 'before')).status).toBe(201)
  await rename(file, `${file}.moved`)
  expect((await createNamed(server.url, 'refused')).status).toBe(503)
  await rename(`${file}.moved`, file)
  expect((await createNamed(server.url, 'after')).status).toBe(201)
  expect((await fetch(`${server.url}/__sandbox/health`)).status).toBe(200)
  await server.close()
  const names = await namesIn(file)
  expect(names).toEqual(expect.arrayContaining(['before', 'after']))
  expect(names).not.toContain('refused')
})
