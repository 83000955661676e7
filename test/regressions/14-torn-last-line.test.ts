// Runs once: every server here names its own store.
import { appendFile, readFile, writeFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { readDataFile } from '../../src/model/data-file.ts'
import { startServer, tempDataFile } from '../_servers.ts'

const start = (dataFile: string) =>
  startServer({ customersPerAccount: 2, dataFile })

/** A data file holding the seed and two created customers; their ids. */
async function dataFileWithTwoCustomers(): Promise<[string, string[]]> {
  const file = await tempDataFile('cts-torn-')
  const server = await start(file)
  const ids: string[] = []
  for (const name of ['Ada', 'Grace']) {
    const response = await fetch(`${server.url}/v1/customers`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${DEMO_KEY_ONE}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name, email: `${name}@example.com` }),
    })
    ids.push(((await response.json()) as { id: string }).id)
  }
  await server.close()
  return [file, ids]
}

it('drops a last line that a crash cut short, keeps every line before it, and starts', async () => {
  const [file, ids] = await dataFileWithTwoCustomers()
  // What kill -9 in the middle of a write leaves: a line without its end.
  await appendFile(file, '{"customer":{"id":"cus_Torn00000000')

  const server = await start(file)
  expect(server.loadedFromFile).toBe(true)
  for (const id of ids) expect(server.sandbox.customers.get(id)).toBeDefined()
  // The start rewrote the file without it.
  expect((await readFile(file, 'utf8')).endsWith('\n')).toBe(true)
  expect(await readFile(file, 'utf8')).not.toContain('cus_Torn')
})

it('refuses to start on a bad line before the last one, naming it, and leaves the file untouched', async () => {
  const [file] = await dataFileWithTwoCustomers()
  const lines = (await readFile(file, 'utf8')).split('\n')
  lines.splice(2, 0, '{"customer": garbage')
  const content = lines.join('\n')
  await writeFile(file, content)

  await expect(start(file)).rejects.toThrow(
    /data file .* is not valid JSON at line 3/,
  )
  expect(await readFile(file, 'utf8')).toBe(content)
  // The lock was given back: a fixed file starts.
  lines.splice(2, 1)
  await writeFile(file, lines.join('\n'))
  expect((await start(file)).loadedFromFile).toBe(true)
})

it('refuses a line that holds no known record, naming its line', async () => {
  const [file] = await dataFileWithTwoCustomers()
  await appendFile(file, '{"invoice":{"id":"inv_1"}}\n')
  await expect(readDataFile(file)).rejects.toThrow(/at line \d+ \(expected/)
})

it('still loads a data file written as one indented JSON document', async () => {
  const [file, ids] = await dataFileWithTwoCustomers()
  await writeFile(file, JSON.stringify(await readDataFile(file), null, 2))

  const server = await start(file)
  for (const id of ids) expect(server.sandbox.customers.get(id)).toBeDefined()
})
