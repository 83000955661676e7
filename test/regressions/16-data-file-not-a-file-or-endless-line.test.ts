// Runs once: every server here names its own store.
import { execFileSync } from 'node:child_process'
import { readFile, stat, truncate, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { DataFileError } from '../../src/model/data-file.ts'
import { runCli, startServer, tempFolder } from '../_servers.ts'

// A FIFO made the start wait for a writer forever.
it('refuses a data file that is a FIFO instead of waiting on it', async () => {
  const fifo = join(await tempFolder('cts-fifo-'), 'data.jsonl')
  execFileSync('mkfifo', [fifo])

  const start = startServer({ dataFile: fifo })
  await expect(start).rejects.toBeInstanceOf(DataFileError)
  await expect(start).rejects.toThrow(`${fifo} is not a regular file`)
  // The lock is given back.
  await expect(readFile(`${fifo}.lock`, 'utf8')).rejects.toThrow(/ENOENT/)
})

// A line longer than a string can hold (here 600 MB of zeros, a sparse
// file) ended the process with readline's "RangeError: Invalid string
// length" and its stack, and left the lock behind.
it('refuses a data file with a line too long to read, in one line, exit 1', async () => {
  const file = join(await tempFolder('cts-endless-'), 'data.jsonl')
  await writeFile(file, '')
  await truncate(file, 600 * 1024 * 1024)

  const cli = runCli(['--port', '0', '--quiet', '--data-file', file])
  expect(await cli.exited).toBe(1)
  expect(cli.stderr()).toMatch(
    new RegExp(
      `^customer-token-sandbox: The data file ${file.replaceAll('.', '\\.')} has a line too long to read \\(over \\d+ bytes\\), so it is damaged or not a data file; it was left untouched\\. Move it away or give --data-file another path\\.\\n$`,
    ),
  )
  expect((await stat(file)).size).toBe(600 * 1024 * 1024)
  await expect(readFile(`${file}.lock`, 'utf8')).rejects.toThrow(/ENOENT/)
}, 60_000)
