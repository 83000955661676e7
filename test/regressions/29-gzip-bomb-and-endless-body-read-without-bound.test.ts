import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { main } from '../../src/cli/cli.ts'
import { readSessionFile } from '../../src/model/session-file.ts'
import type { RecordedExchange } from '../../src/model/session-file.ts'
import { startMisbehaving, type Misbehaviour } from '../_misbehaving.ts'
import { captureOutput, tempFolder, verifyAgainst } from '../_servers.ts'

// verify once inflated a 2 GiB gzip bomb (2.0 GB RSS, then a wrong "did not
// answer within 10000 ms"), held 50 MB answers whole and read an endless body
// until memory ran out. Each answer is now read up to --max-body, after
// decompression, and the report says which cap stopped it.

/** verify against a fresh service that misbehaves as `how` says. */
async function verifyMisbehaving(how: Misbehaviour, ...flags: string[]) {
  return verifyAgainst((await startMisbehaving(how)).url, ...flags)
}

it('stops reading a gzip bomb at 8 MB after decompression and says to raise --max-body', async () => {
  const { exitCode, report } = await verifyMisbehaving({
    kind: 'gzip-bomb',
    decodedMb: 64,
  })
  expect(exitCode).toBe(3)
  expect(report).toContain(
    'answer larger than 8 MB after decompression; raise --max-body',
  )
  expect(report).not.toContain('did not answer within')
})

it.for(['deflate', 'br'] as const)(
  'stops reading a %s bomb at 8 MB after decompression too',
  async (encoding) => {
    const { exitCode, report } = await verifyMisbehaving({
      kind: 'bomb',
      encoding,
      decodedMb: 64,
    })
    expect(exitCode).toBe(3)
    expect(report).toContain(
      'answer larger than 8 MB after decompression; raise --max-body',
    )
  },
)

it('stops reading an endless body at the --max-body given', async () => {
  const { exitCode, report } = await verifyMisbehaving(
    { kind: 'endless' },
    '--max-body',
    '1MB',
  )
  expect(exitCode).toBe(3)
  expect(report).toContain('answer larger than 1 MB; raise --max-body')
})

it('reads a large answer whole once --max-body is raised above it', async () => {
  const { report } = await verifyMisbehaving(
    { kind: 'large', mb: 2 },
    '--max-body',
    '4MB',
  )
  expect(report).not.toContain('raise --max-body')
})

it('refuses a --max-body that is not a size', async () => {
  const { exitCode } = await verifyMisbehaving(
    { kind: 'endless' },
    '--max-body',
    'lots',
  )
  expect(exitCode).toBe(2)
})

it('record streams a bomb through to the client and keeps its headers and a note, not its body', async () => {
  const service = await startMisbehaving({ kind: 'gzip-bomb', decodedMb: 24 })
  const file = join(await tempFolder('cts-bomb-'), 'session.jsonl')
  const out = captureOutput()
  const { recorder } = await main({
    args: ['record', '--target', service.url, '--port', '0', '--out', file],
    stdout: out.stream,
    stderr: captureOutput().stream,
    env: {},
  })
  const answer = await fetch(`${recorder!.url}/v1/customers`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
  expect(answer.status).toBe(201)
  expect((await answer.arrayBuffer()).byteLength).toBe(24 * 1024 * 1024)
  await recorder!.close()
  expect(out.text()).toContain(`1 exchange saved to ${file}`)
  const session = (await readSessionFile(file, '--from')) as {
    recorded: { exchanges: RecordedExchange[] }
  }
  const [exchange] = session.recorded.exchanges
  expect(exchange?.response.status).toBe(201)
  expect(exchange?.response.body).toBe('')
  expect(exchange?.response.note).toMatch(
    /the answer \(24 MB\) is larger than 8 MB; raise --max-body/,
  )
  expect((await readFile(file)).byteLength).toBeLessThan(64 * 1024)
})
