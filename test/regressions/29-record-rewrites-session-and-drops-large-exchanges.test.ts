import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { main } from '../../src/cli/cli.ts'
import { createSandbox } from '../../src/index.ts'
import {
  captureOutput,
  postCustomer,
  recordMisbehaving,
  runMain,
  startServer,
  tempFolder,
} from '../_servers.ts'

// record once rewrote the whole session after every exchange: with 50 MB
// answers one call took 25.7 s after 12; with 120 MB answers the client got
// six 201s, and after Ctrl-C the file held two exchanges and nothing said so.

const post = (url: string, body: unknown = {}) => postCustomer(url, body)

const linesOf = async (file: string) =>
  (await readFile(file, 'utf8')).split('\n').filter(Boolean)

it('keeps every large answer as its headers and a note, and says on Ctrl-C how many exchanges the file holds', async () => {
  const { cli, file, url } = await recordMisbehaving(
    { kind: 'large', mb: 12 },
    'cts-large-',
  )
  for (let i = 0; i < 6; i++) {
    const answer = await post(url)
    expect(answer.status).toBe(201)
    // The client gets the whole answer; only the file leaves its body out.
    expect((await answer.arrayBuffer()).byteLength).toBeGreaterThan(
      12 * 1024 * 1024,
    )
  }
  await cli.waitFor(/(POST \/v1\/customers 201.*\n[^]*){6}/)
  expect(cli.stdout()).toMatch(
    /POST \/v1\/customers 201 \d+ ms \(body not kept: the answer \(12 MB\) is larger than 8 MB; raise --max-body to keep it\)/,
  )
  expect(await cli.stop('SIGINT')).toBe(0)
  expect(cli.stdout()).toContain(`6 exchanges saved to ${file}`)
  const [header, ...exchanges] = await linesOf(file)
  expect(JSON.parse(header!).format).toBe('customer-token-sandbox/recording')
  expect(exchanges).toHaveLength(6)
  for (const line of exchanges) {
    const { response } = JSON.parse(line)
    expect(response.status).toBe(201)
    expect(response.headers['content-type']).toBe('application/json')
    expect(response.note).toContain('is larger than 8 MB; raise --max-body')
  }
}, 30_000)

it('appends each exchange: what the file held before is never rewritten', async () => {
  const live = await startServer({ customersPerAccount: 0 })
  const file = join(await tempFolder('cts-append-'), 'session.jsonl')
  const out = captureOutput()
  const { recorder } = await main({
    args: ['record', '--target', live.url, '--port', '0', '--out', file],
    stdout: out.stream,
    stderr: captureOutput().stream,
    env: {},
  })
  await post(recorder!.url, { name: 'Ada', email: 'ada@example.com' })
  const before = await readFile(file, 'utf8')
  expect(before.split('\n').filter(Boolean)).toHaveLength(2)
  await post(recorder!.url, { name: 'Grace', email: 'grace@example.com' })
  await post(recorder!.url, { name: '' })
  const after = await readFile(file, 'utf8')
  expect(after.startsWith(before)).toBe(true)
  expect(after.split('\n').filter(Boolean)).toHaveLength(4)
  await recorder!.close()
  expect(out.text()).toContain(`3 exchanges saved to ${file}`)

  // The recording is a session --from and verify --from load.
  const [stderr, exitCode] = await runMain([
    '--from',
    file,
    '--port',
    '0',
    '--quiet',
  ])
  expect(stderr).toBe('')
  expect(exitCode).toBeUndefined()
  const verified = captureOutput()
  const verify = await main({
    args: ['verify', '--from', file],
    stdout: verified.stream,
    stderr: captureOutput().stream,
    env: {},
  })
  expect(verify.exitCode).toBe(0)
  expect(verified.text()).toContain('3 recorded exchanges replayed offline')
})

it('saves a call still in flight, with a note, when SIGTERM stops it', async () => {
  const { cli, file, url } = await recordMisbehaving(
    { kind: 'endless' },
    'cts-term-',
  )
  const answer = await post(url)
  expect(answer.status).toBe(201)
  const reader = answer.body!.getReader()
  await reader.read()
  expect(await cli.stop('SIGTERM')).toBe(0)
  await reader.cancel().catch(() => undefined)
  expect(cli.stdout()).toContain(`1 exchange saved to ${file}`)
  const [, line] = await linesOf(file)
  expect(JSON.parse(line!).response.note).toMatch(/the recorder stopped/)
})

it('still loads a session in the JSON format earlier releases wrote', async () => {
  const sandbox = createSandbox({ customersPerAccount: 0 })
  await sandbox.ready
  const exchange = {
    at: '2026-05-01T10:00:00.000Z',
    duration_ms: 3,
    request: {
      method: 'POST',
      path: '/v1/customers',
      headers: {
        authorization: 'Bearer sk_test_…0001',
        'content-type': 'application/json',
      },
      body: '{"name":"Ada","email":"ada@example.com"}',
    },
    response: {
      status: 201,
      headers: { 'content-type': 'application/json' },
      body: '{"id":"cus_0123456789abcd","name":"Ada","email":"ada@example.com"}',
    },
  }
  const file = join(await tempFolder('cts-old-'), 'session.json')
  await writeFile(
    file,
    JSON.stringify(
      {
        ...sandbox.export(),
        recorded: { target: 'http://old.test', exchanges: [exchange] },
      },
      null,
      2,
    ),
  )
  const out = captureOutput()
  const { exitCode } = await main({
    args: ['verify', '--from', file],
    stdout: out.stream,
    stderr: captureOutput().stream,
    env: {},
  })
  expect(exitCode).toBe(0)
  expect(out.text()).toContain('1 recorded exchange replayed offline')
  expect((await runMain(['--from', file, '--port', '0', '--quiet']))[1]).toBe(
    undefined,
  )
})
