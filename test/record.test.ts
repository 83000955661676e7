import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import { main } from '../src/cli/cli.ts'
import { createSandbox } from '../src/index.ts'
import {
  createSandboxServer,
  type SandboxServer,
} from '../src/runtimes/node.ts'
import { startRecorder } from '../src/cli/record.ts'
import { verifyRecorded } from '../src/cli/verify/offline.ts'
import { readSessionFile } from '../src/model/session-file.ts'
import { startRecording, startServer } from './_servers.ts'

let dir: string
// The live service's own key: never the sandbox's documented demo key.
const LIVE_KEY = 'sk_test_LiveServiceSecretKey0000'
const LIVE_FIXTURES = {
  accounts: [
    { id: 'acct_LiveAccount001', name: 'Live', apiKeys: [{ key: LIVE_KEY }] },
  ],
}
const servers: SandboxServer[] = []

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'record-'))
})
afterAll(async () => {
  for (const server of servers) await server.close()
  await rm(dir, { recursive: true, force: true })
})

const post = (url: string, path: string, body: unknown, credential?: string) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(credential && { authorization: `Bearer ${credential}` }),
    },
    body: JSON.stringify(body),
  })

/** A client's session through the recorder: the calls a consumer makes. */
async function script(url: string): Promise<string> {
  const customer = await post(
    url,
    '/v1/customers',
    { name: 'Ada Lovelace', email: 'ada@example.com' },
    LIVE_KEY,
  )
  expect(customer.status).toBe(201)
  const token = (await (
    await post(url, '/v2/tokens', { scopes: ['customers:write'] }, LIVE_KEY)
  ).json()) as { token: string }
  await post(
    url,
    '/v1/customers',
    { name: 'Grace Hopper', email: 'grace@example.com' },
    token.token,
  )
  await post(
    url,
    '/v1/customers',
    { name: 'Ada again', email: 'ada@example.com' },
    LIVE_KEY,
  )
  await post(
    url,
    '/v1/customers',
    { name: '', email: 'x@example.com' },
    LIVE_KEY,
  )
  await post(url, '/v1/customers', { name: 'No key', email: 'n@example.com' })
  return token.token
}

async function recordAgainst(
  options: Parameters<typeof createSandboxServer>[0],
  file: string,
): Promise<{ text: string; token: string; session: unknown }> {
  const live = await createSandboxServer({
    port: 0,
    customersPerAccount: 0,
    fixtures: LIVE_FIXTURES,
    ...options,
  })
  servers.push(live)
  const recorder = await startRecorder({ target: live.url, file })
  const token = await script(recorder.url)
  await recorder.close()
  const text = await readFile(file, 'utf8')
  return { text, token, session: await readSessionFile(file, '--from') }
}

describe('record → --from → verify --from', { timeout: 60_000 }, () => {
  it('saves every exchange with its secrets masked, as a session --from loads', async () => {
    const file = join(dir, 'session.jsonl')
    const { text, token, session } = await recordAgainst({}, file)
    const exchanges = (session as { recorded: { exchanges: unknown[] } })
      .recorded.exchanges
    expect(exchanges).toHaveLength(6)
    expect(text).not.toContain(LIVE_KEY)
    expect(text).not.toContain(token)
    expect(text).toContain('"authorization":"Bearer sk_test_…0000"')

    // The sandbox starts from it, holding the customers the service created.
    const sandbox = createSandbox({ from: session })
    await sandbox.ready
    const emails = sandbox.state().customers.map((c) => c.email)
    expect(emails).toEqual(
      expect.arrayContaining(['ada@example.com', 'grace@example.com']),
    )
    const { server, exitCode } = await main({
      args: ['--from', file, '--port', '0', '--quiet'],
      stdout: { write: () => true } as unknown as NodeJS.WritableStream,
      stderr: process.stderr,
      env: {},
    })
    expect(exitCode).toBeUndefined()
    expect(server!.sandbox.state().customers.length).toBe(
      sandbox.state().customers.length,
    )
    await server!.close()
  })

  it('verify --from finds nothing to report when the service is the sandbox as configured', async () => {
    const { session } = await recordAgainst({}, join(dir, 'same.jsonl'))
    const report = await verifyRecorded(session, {})
    expect(report.summary.differs, JSON.stringify(report.rows)).toBe(0)
    const matching = report.rows
      .filter((r) => r.verdict === 'matches')
      .map((r) => r.id)
    expect(matching).toEqual(
      expect.arrayContaining([
        'customer.success-status',
        'token.record',
        'auth.v1-accepts-tokens',
        'auth.errors',
        'customer.name-constraints',
        'errors.shape',
      ]),
    )
  })

  it('verify --from reports, offline, where the recorded service differs from the sandbox', async () => {
    const file = join(dir, 'differs.jsonl')
    const { session } = await recordAgainst(
      { uniqueEmail: true, v1AcceptsTokens: false },
      file,
    )
    const report = await verifyRecorded(session, {})
    const verdicts = Object.fromEntries(
      report.rows.map((r) => [r.id, r.verdict]),
    )
    expect(verdicts['customer.email-uniqueness']).toBe('differs')
    expect(verdicts['auth.v1-accepts-tokens']).toBe('differs')
    expect(verdicts['customer.success-status']).toBe('matches')

    // Configured like the service, the sandbox agrees with the recording.
    const agreed = await verifyRecorded(session, {
      uniqueEmail: true,
      v1AcceptsTokens: false,
    })
    expect(agreed.summary.differs).toBe(0)

    const stdout = {
      text: '',
      write(chunk: string) {
        this.text += chunk
        return true
      },
    }
    const { exitCode } = await main({
      args: ['verify', '--from', file],
      stdout: stdout as unknown as NodeJS.WritableStream,
      stderr: process.stderr,
      env: {},
    })
    expect(exitCode).toBe(1)
    expect(stdout.text).toMatch(/customer\.email-uniqueness +differs/)
  })

  it('the record command proxies, saves, and stops cleanly on Ctrl-C', async () => {
    const live = await startServer()
    const file = join(dir, 'cli.jsonl')
    const { cli, url } = await startRecording(live.url, file)
    const answer = await post(
      url!,
      '/v1/customers',
      { name: 'Via CLI', email: 'cli@example.com' },
      DEMO_KEY_ONE,
    )
    expect(answer.status).toBe(201)
    await cli.waitFor(/POST \/v1\/customers 201/)
    expect(await cli.stop('SIGINT')).toBe(0)
    expect(cli.stdout()).toContain(`1 exchange saved to ${file}`)
    const session = (await readSessionFile(file, '--from')) as {
      recorded: { exchanges: unknown[] }
    }
    expect(session.recorded.exchanges).toHaveLength(1)
    expect(cli.stderr()).toBe('')
  })
})
