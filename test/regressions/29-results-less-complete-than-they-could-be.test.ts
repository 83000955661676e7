import { join } from 'node:path'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { main } from '../../src/cli/cli.ts'
import { startMisbehaving } from '../_misbehaving.ts'
import {
  ALL_DIFFERENT,
  captureOutput,
  postCustomer,
  startCli,
  startServer,
  tempFolder,
  verifyAgainst,
} from '../_servers.ts'

// The default --max-creates (20) ran out against a service with three
// differing assumptions, with no hint to raise it; verify --from left rows
// unknown that its recording could answer and printed "1 recorded exchanges
// agree" and "0 records created (each tagged "none (offline)" …)"; --dry-run
// announced 41 requests where the run sent 40; recorded tokens did not carry
// over; network failures surfaced as bare undici codes.

async function run(...args: string[]) {
  const out = captureOutput()
  const { exitCode, recorder } = await main({
    args,
    stdout: out.stream,
    stderr: captureOutput().stream,
    env: {},
  })
  return { exitCode, text: out.text(), recorder }
}

/** `record` in this process in front of `target`, into a fresh session file. */
async function record(target: string, prefix: string, ...flags: string[]) {
  const file = join(await tempFolder(prefix), 'session.jsonl')
  const { recorder } = await run(
    'record',
    '--target',
    target,
    '--port',
    '0',
    '--out',
    file,
    ...flags,
  )
  return { file, recorder: recorder! }
}

const verify = (target: string, ...flags: string[]) =>
  verifyAgainst(target, '--rate', '2000', ...flags)

it(
  'probes every row of a service whose every configurable assumption differs within the default --max-creates',
  { timeout: 60_000 },
  async () => {
    const live = await startServer({ ...ALL_DIFFERENT, customersPerAccount: 0 })
    const { exitCode, report } = await verify(live.url)
    expect(exitCode).toBe(1)
    expect(report).not.toContain('not probed: --max-')
    expect(report).not.toContain('ran out before every row was probed')
  },
)

it(
  'says which --max-creates would probe the rest, and that value does',
  { timeout: 60_000 },
  async () => {
    const live = await startServer({ ...ALL_DIFFERENT, customersPerAccount: 0 })
    const first = await verify(live.url, '--max-creates', '10')
    expect(first.report).toContain('not probed: --max-creates (10) reached')
    const [, suggested] =
      /--max-creates ran out before every row was probed: run again with --max-creates (\d+) to probe the rest\./.exec(
        first.report,
      ) ?? []
    expect(Number(suggested)).toBeGreaterThan(10)
    const again = await verify(live.url, '--max-creates', suggested!)
    expect(again.report).not.toContain('not probed: --max-')
  },
)

it(
  'announces in --dry-run the number of requests the run sends to a service that behaves like the sandbox',
  { timeout: 60_000 },
  async () => {
    const plain = await startServer({ customersPerAccount: 0 })
    const dry = await verify(plain.url, '--dry-run')
    const real = await verify(plain.url)
    const announced = Number(
      /(\d+) requests if the service behaves/.exec(dry.report)?.[1],
    )
    const sent = Number(/(\d+) requests sent to /.exec(real.report)?.[1])
    expect(real.exitCode).toBe(0)
    expect(announced).toBe(sent)
  },
)

it(
  'verify --from judges the id format and the required fields from recorded exchanges and speaks of an offline run',
  { timeout: 60_000 },
  async () => {
    const live = await startServer({
      requiredFields: ['name'],
      customersPerAccount: 0,
    })
    const { file, recorder } = await record(live.url, 'cts-offline-')
    const post = (body: unknown) => postCustomer(recorder.url, body)
    for (const name of ['Ada', 'Grace', 'Edsger'])
      expect((await post({ name, email: `${name}@example.com` })).status).toBe(
        201,
      )
    expect((await post({ name: 'No email' })).status).toBe(201)
    expect((await post({ email: 'no-name@example.com' })).status).toBe(422)
    await recorder.close()

    const { exitCode, text } = await run('verify', '--from', file)
    expect(exitCode).toBe(1)
    expect(text).toMatch(
      /customer\.id-format +matches +4 recorded exchanges agree/,
    )
    expect(text).toMatch(
      /customer\.required-fields +differs +1 of 2 recorded exchanges differs; first: POST \/v1\/customers: the service answe/,
    )
    expect(text).toContain(
      '5 recorded exchanges replayed offline; nothing was sent to the service and no record was created.',
    )
    expect(text).not.toMatch(/\b1 recorded exchanges\b/)
    expect(text).not.toContain('records created')
    expect(text).not.toContain('none (offline)')
  },
)

for (const keep of [true, false]) {
  it(
    keep
      ? 'lets a client holding a recorded token in after --from when the recording kept secrets'
      : 'answers 401 to a recorded token after --from when the recording masked it',
    { timeout: 60_000 },
    async () => {
      const live = await startServer({ customersPerAccount: 0 })
      const { file, recorder } = await record(
        live.url,
        'cts-secrets-',
        ...(keep ? ['--keep-secrets'] : []),
      )
      const minted = await fetch(`${recorder.url}/v2/tokens`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${DEMO_KEY_ONE}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ scopes: ['customers:write'] }),
      })
      const { token } = (await minted.json()) as { token: string }
      await recorder.close()

      const replay = await startCli(['--from', file, '--port', '0', '--quiet'])
      const answer = await fetch(`${replay.url}/v1/customers`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ name: 'Held', email: 'held@example.com' }),
      })
      expect(answer.status).toBe(keep ? 201 : 401)
    },
  )
}

it('explains a network failure in a sentence with the code after it', async () => {
  const service = await startMisbehaving({ kind: 'cut-short' })
  const { exitCode, report } = await verify(service.url)
  expect(exitCode).toBe(3)
  expect(report).toContain(
    'the connection was closed before the answer ended (UND_ERR_SOCKET)',
  )
})
