// Runs once: every server here names its own store.
import { readFile, writeFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { DataFileError } from '../../src/model/data-file.ts'
import { runCli, startServer, tempDataFile } from '../_servers.ts'

// A file that is not JSON from its first line on, with more lines after it:
// binary garbage, or a hand-edited snapshot with a slip on line 1.
const GARBAGE =
  'PK\u0003\u0004\u001b[2J\u001b]0;owned\u0007 not json\n{}\nmore\n'

it('refuses a data file whose first line is not JSON, with more lines after it, as a DataFileError naming the file and the line', async () => {
  const file = await tempDataFile('cts-first-')
  await writeFile(file, GARBAGE)

  const start = startServer({ dataFile: file })
  await expect(start).rejects.toBeInstanceOf(DataFileError)
  await expect(start).rejects.toThrow(`${file} is not valid JSON at line 1`)
  expect(await readFile(file, 'utf8')).toBe(GARBAGE)
})

it('prints one line without the file’s control characters and exits 1', async () => {
  const file = await tempDataFile('cts-first-')
  await writeFile(file, GARBAGE)

  const cli = runCli(['--port', '0', '--quiet', '--data-file', file])
  expect(await cli.exited).toBe(1)
  const lines = cli.stderr().trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toContain(
    `The data file ${file} is not valid JSON at line 1`,
  )
  expect(lines[0]).toContain('Move it away or give --data-file another path.')
  expect(cli.stderr().replaceAll('\n', '')).not.toMatch(/\p{Cc}/u)
  expect(await readFile(file, 'utf8')).toBe(GARBAGE)
})
