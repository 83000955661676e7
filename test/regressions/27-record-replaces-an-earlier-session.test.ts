import { access, readFile, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
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

// Refusing a file that exists made a start that failed later a trap: a
// port in use left the new file holding its header, and the next start,
// on a free port, was refused for it.
it('leaves no file when it cannot listen, so that the next start records', async () => {
  const live = await startServer()
  const file = join(await tempFolder('cts-record-'), 'session.jsonl')
  const taken = createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  const busy = String((taken.address() as AddressInfo).port)
  const run = (port: string) =>
    main({
      args: ['record', '--target', live.url, '--port', port, '--out', file],
      stdout: captureOutput().stream,
      stderr: captureOutput().stream,
      env: {},
    })
  try {
    expect((await run(busy)).exitCode).toBe(1)
  } finally {
    taken.close()
  }
  await expect(access(file)).rejects.toThrow(/ENOENT/)
  const { recorder } = await run('0')
  expect(recorder).toBeDefined()
  await recorder?.close()
})
