import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { readDataFile } from '../../src/model/data-file.ts'
import {
  createNamed,
  customerNames,
  startCli,
  startServer,
  tempFolder,
  writeSession,
} from '../_servers.ts'

// `--from session.json` beside a `--data-file` that held data started from
// the data file: the session was dropped without a word (only the banner's
// "loaded from" hinted at it). The file still wins (a restart goes on with
// it), and the CLI now says so.

/** The CLI's arguments for a server on `file`, started from `session`. */
const withFrom = (file: string, session: string): string[] => [
  '--port',
  '0',
  '--quiet',
  '--data-file',
  file,
  '--from',
  session,
]

it('goes on with a data file that holds data, as a restart with the same command line must, and says on stderr that --from was not used', async () => {
  const folder = await tempFolder('cts-from-')
  const session = await writeSession(folder)
  const file = join(folder, 'data.json')
  const args = withFrom(file, session)

  const first = await startCli(args)
  expect(await customerNames(first.url)).toEqual(['Session'])
  expect(first.stderr()).toBe('')
  const created = await createNamed(first.url, 'Since')
  expect(created.status).toBe(201)
  expect(await first.stop()).toBe(0)

  const again = await startCli(args)
  expect(await customerNames(again.url)).toEqual(['Session', 'Since'])
  const lines = again.stderr().trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toContain('--from was not used')
  expect(lines[0]).toContain(`the data file ${file} already holds data`)
  expect(lines[0]).toContain('Delete the data file')
})

it('starts createSandboxServer({ from, dataFile }) from the data file once it holds data', async () => {
  const folder = await tempFolder('cts-from-')
  const session = JSON.parse(await readFile(await writeSession(folder), 'utf8'))
  const file = join(folder, 'data.json')
  await (await startServer({ dataFile: file })).close()

  const server = await startServer({ dataFile: file, from: session })
  expect(server.loadedFromFile).toBe(true)
  expect(await customerNames(server.url)).not.toContain('Session')
})

it.each([
  ['does not exist yet', async () => {}],
  ['is empty', (file: string) => writeFile(file, '')],
])(
  'seeds a data file that %s from --from, and the file keeps it',
  async (_, prepare) => {
    const folder = await tempFolder('cts-from-')
    const session = await writeSession(folder)
    const file = join(folder, 'data.json')
    await prepare(file)

    const cli = await startCli(withFrom(file, session))
    expect(await customerNames(cli.url)).toEqual(['Session'])
    expect(await cli.stop()).toBe(0)

    const saved = (await readDataFile(file)) as {
      customers: { name: string }[]
    }
    expect(saved.customers.map((c) => c.name)).toEqual(['Session'])
    const again = await startCli([
      '--port',
      '0',
      '--quiet',
      '--data-file',
      file,
    ])
    expect(await customerNames(again.url)).toEqual(['Session'])
  },
)
