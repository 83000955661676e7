import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { main } from '../../src/cli/cli.ts'
import { captureOutput, startServer, tempFolder } from '../_servers.ts'

// `record` opened its --out file for writing from scratch: running it again
// with the same command line (the default is session.jsonl) emptied the
// session recorded before, with nothing said.

it('refuses an --out file that exists and leaves it as it was', async () => {
  const live = await startServer()
  const file = join(await tempFolder('cts-record-'), 'session.jsonl')
  const earlier = '{"format":"customer-token-sandbox/recording"}\n{"at":"…"}\n'
  await writeFile(file, earlier)
  const stderr = captureOutput()
  const { exitCode, recorder } = await main({
    args: ['record', '--target', live.url, '--port', '0', '--out', file],
    stdout: captureOutput().stream,
    stderr: stderr.stream,
    env: {},
  })
  await recorder?.close()
  expect(exitCode).toBe(1)
  expect(stderr.text()).toBe(
    `customer-token-sandbox record: ${file} already exists, and a recording never replaces a file: move it away, or record into another file (--out).\n`,
  )
  expect(await readFile(file, 'utf8')).toBe(earlier)
})
