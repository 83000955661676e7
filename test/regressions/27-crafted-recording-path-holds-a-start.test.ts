// Runs once: every server here names its own store.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import {
  RECORDING_FORMAT,
  readSessionFile,
} from '../../src/model/session-file.ts'
import { tempFolder } from '../_servers.ts'

// Found by attacking the CLI from outside: a recording's paths are not
// checked, and its query was cut off with /\?.*$/, which over a path of
// many `?` and then a line end starts again at each `?` and reads to the
// line end: 80,000 of them held `--from` (and `verify --from`) 17.6 s, and
// the time grew with the square of their number. The query is cut at the
// first `?` now.

it('reads a recording whose one path is 200,000 question marks and a line end at once', async () => {
  const file = join(await tempFolder('cts-crafted-'), 'session.jsonl')
  const source = createSandbox({ seed: 1, customersPerAccount: 0 })
  await source.ready
  const header = {
    format: RECORDING_FORMAT,
    version: 1,
    target: 'http://127.0.0.1:9',
    keep_secrets: false,
    session: source.export(),
  }
  const exchange = {
    at: new Date(0).toISOString(),
    duration_ms: 1,
    request: {
      method: 'POST',
      path: `${'?'.repeat(200_000)}\n`,
      headers: {},
      body: '{}',
    },
    response: { status: 201, headers: {}, body: '{"id":"cus_Crafted0000001"}' },
  }
  await writeFile(
    file,
    `${JSON.stringify(header)}\n${JSON.stringify(exchange)}\n`,
  )
  const started = createSandbox({ from: await readSessionFile(file) })
  await started.ready
  expect(started.customers.list()).toEqual([])
}, 20_000)
