import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { expect, it } from 'vitest'
import { main } from '../../src/cli/cli.ts'
import { readSessionFile } from '../../src/model/session-file.ts'
import type { RecordedExchange } from '../../src/model/session-file.ts'
import { ENCODED_CUSTOMER, startMisbehaving } from '../_misbehaving.ts'
import { captureOutput, tempFolder, verifyAgainst } from '../_servers.ts'

// fetch decodes gzip, deflate and br, and passes any other coding (zstd,
// "gzip, identity") as it came. record then dropped the Content-Encoding
// anyway: the client got compressed bytes labelled as plain JSON, and the
// session kept them as a garbled body. verify called them "not JSON".

it('record forwards a body it cannot decode with its Content-Encoding, and keeps a note instead of the bytes', async () => {
  const service = await startMisbehaving({
    kind: 'encoded',
    encoding: 'x-custom',
  })
  const file = join(await tempFolder('cts-encoded-'), 'session.jsonl')
  const { recorder } = await main({
    args: ['record', '--target', service.url, '--port', '0', '--out', file],
    stdout: captureOutput().stream,
    stderr: captureOutput().stream,
    env: {},
  })
  const answer = await fetch(`${recorder!.url}/v1/customers`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
  expect(answer.status).toBe(201)
  expect(answer.headers.get('content-encoding')).toBe('x-custom')
  const bytes = Buffer.from(await answer.arrayBuffer())
  expect(gunzipSync(bytes).toString()).toBe(ENCODED_CUSTOMER)
  await recorder!.close()
  const session = (await readSessionFile(file, '--from')) as {
    recorded: { exchanges: RecordedExchange[] }
  }
  const [exchange] = session.recorded.exchanges
  expect(exchange?.response.headers['content-encoding']).toBe('x-custom')
  expect(exchange?.response.body).toBe('')
  expect(exchange?.response.note).toBe(
    'body not kept: it is encoded as x-custom, which record cannot decode',
  )
})

it('verify names a coding it cannot decode', async () => {
  const service = await startMisbehaving({
    kind: 'encoded',
    encoding: 'gzip, identity',
  })
  const { exitCode, report } = await verifyAgainst(service.url)
  expect(report).toContain(
    'the service answered 201 encoded as gzip, identity, which verify cannot decode (it asks for gzip, deflate or br)',
  )
  expect(report).not.toContain('not JSON')
  expect(exitCode).toBe(3)
})
