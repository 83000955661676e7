import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import type { SandboxCore } from '../../src/index.ts'
import { checkResponse } from '../_openapi.ts'
import { httpExchange, rawExchange, type RawAnswer } from '../_raw.ts'
import { startCli, startServer, tempDataFile } from '../_servers.ts'

// A validating proxy (Prism --errors) or a client generated from
// /openapi.json met answers the document did not list: a body over
// maxBodyBytes or sent compressed to a /__sandbox/ call (413, 415), the
// standalone server's edge on any call (a repeated header or a bad Host is
// 400 invalid_request or invalid_host, an Expect it cannot meet 417, a
// transfer coding 415, too many headers 431), and a /__sandbox/ change the
// data file could not store (503 storage_unavailable).

const KEY = 'sk_test_DemoKeyForTheSandbox0001'

/** Checks an answer as read off the wire against the sandbox's document. */
async function check(
  sandbox: SandboxCore,
  method: string,
  path: string,
  answer: Pick<RawAnswer, 'status' | 'body'> & {
    headers: Record<string, string | string[] | undefined>
  },
  code: string,
): Promise<void> {
  const headers = new Headers()
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value !== undefined) headers.set(name, String(value))
  }
  const response = new Response(answer.body, {
    status: answer.status,
    headers,
  })
  expect(((await response.clone().json()) as { code: string }).code).toBe(code)
  await checkResponse(
    sandbox,
    method,
    new URL(path, 'http://127.0.0.1'),
    response,
  )
}

it('lists every refusal of the standalone server and of a /__sandbox/ body under its call', async () => {
  const server = await startServer({ maxBodyBytes: 1024 })
  const { sandbox } = server
  const { port } = new URL(server.url)
  const json = { host: '127.0.0.1', 'content-type': 'application/json' }

  const tooLarge = await httpExchange(
    +port,
    'POST',
    '/__sandbox/clock',
    json,
    JSON.stringify({ advance_seconds: 1, pad: 'x'.repeat(2048) }),
  )
  expect(tooLarge.status).toBe(413)
  await check(
    sandbox,
    'POST',
    '/__sandbox/clock',
    tooLarge,
    'payload_too_large',
  )

  const compressed = await httpExchange(
    +port,
    'POST',
    '/__sandbox/clock',
    { ...json, 'content-encoding': 'gzip' },
    '{}',
  )
  expect(compressed.status).toBe(415)
  await check(
    sandbox,
    'POST',
    '/__sandbox/clock',
    compressed,
    'unsupported_media_type',
  )

  const expectation = await httpExchange(
    +port,
    'POST',
    '/__sandbox/clock',
    { ...json, expect: '200-ok' },
    '{"advance_seconds":1}',
  )
  expect(expectation.status).toBe(417)
  await check(
    sandbox,
    'POST',
    '/__sandbox/clock',
    expectation,
    'expectation_failed',
  )

  const coded = await rawExchange(
    +port,
    'GET /__sandbox/health HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n0\r\n\r\n',
  )
  expect(coded.status).toBe(415)
  await check(
    sandbox,
    'GET',
    '/__sandbox/health',
    coded,
    'unsupported_media_type',
  )

  const body = '{"name":"Ada","email":"ada@example.com"}'
  const repeated = await rawExchange(
    +port,
    `POST /v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nIdempotency-Key: a\r\nIdempotency-Key: b\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
  )
  expect(repeated.status).toBe(400)
  await check(sandbox, 'POST', '/v1/customers', repeated, 'invalid_request')

  const badHost = await rawExchange(
    +port,
    `POST /v2/tokens HTTP/1.1\r\nHost: a b\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
  )
  expect(badHost.status).toBe(400)
  await check(sandbox, 'POST', '/v2/tokens', badHost, 'invalid_host')

  const many = Array.from({ length: 120 }, (_, i) => `X-H${i}: 1\r\n`).join('')
  const crowded = await rawExchange(
    +port,
    `GET /__sandbox/state HTTP/1.1\r\nHost: 127.0.0.1\r\n${many}Connection: close\r\n\r\n`,
  )
  expect(crowded.status).toBe(431)
  await check(sandbox, 'GET', '/__sandbox/state', crowded, 'headers_too_large')
}, 30_000)

it('lists 503 storage_unavailable with Retry-After under a /__sandbox/ change the data file cannot store', async () => {
  // Under `ulimit -f` every write past the size fails with EFBIG, as ENOSPC
  // does on a full disk (see 27-admin-change-on-full-disk-said-undone-but-kept).
  const file = await tempDataFile('cts-undocumented-503-')
  const args = ['--port', '0', '--quiet', '--data-file', file]
  const roomy = await startCli([...args, '--customers', '200'])
  expect(await roomy.stop()).toBe(0)
  const full = await startCli(args, { fileSizeLimitKb: 48 })
  const response = await fetch(`${full.url}/__sandbox/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ advance_seconds: 60 }),
  })
  expect(response.status).toBe(503)
  // The server's document is the default options' one.
  const sandbox = createSandbox()
  await check(
    sandbox,
    'POST',
    '/__sandbox/clock',
    {
      status: response.status,
      headers: Object.fromEntries(response.headers),
      body: await response.text(),
    },
    'storage_unavailable',
  )
  expect(await full.stop()).toBe(0)
}, 30_000)
