import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { startCli, startRecording, tempFolder } from '../_servers.ts'

// Found by starting the server twice from one recording: each run minted the
// same token secret for the demo key (tok_test_…), and the same ids. The
// recording's header held the session of the recorder's sandbox, options
// and all, and so `deterministic: true`, the JavaScript default it resolved;
// `--from` took it as the session's own, where docs/reference/options.md says
// that the standalone server draws ids and secrets from Web Crypto
// (`--deterministic` to change). The recorder no longer writes it, a
// recording made before is read without it, and a server started from a
// session that names none draws as it does without one. An export keeps the
// exporting server's: one of a --deterministic server still replays exactly.

/** The token secret and the customer id a server started with `args` makes first. */
async function firstMade(
  args: string[],
): Promise<{ token: string; customer: string }> {
  const server = await startCli(['--port', '0', '--quiet', ...args])
  const post = async (path: string, body: unknown) => {
    const answer = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${DEMO_KEY_ONE}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify(body),
    })
    expect(answer.status).toBe(201)
    return (await answer.json()) as { id: string; token?: string }
  }
  const { token } = await post('/v2/tokens', { scopes: ['customers:write'] })
  const { id } = await post('/v1/customers', {
    name: 'Ada',
    email: 'ada@example.com',
  })
  expect(await server.stop()).toBe(0)
  return { token: token!, customer: id }
}

/** A recording of one customer created through `record` in front of a sandbox. */
async function recording(folder: string): Promise<string> {
  const live = await startCli(['--port', '0', '--quiet'])
  const file = join(folder, 'session.jsonl')
  const { cli: recorder, url } = await startRecording(live.url, file)
  const answer = await fetch(`${url}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name: 'Recorded', email: 'rec@example.com' }),
  })
  expect(answer.status).toBe(201)
  expect(await recorder.stop('SIGINT')).toBe(0)
  expect(await live.stop()).toBe(0)
  return file
}

it('mints other secrets and ids on each start from a recording, as the server does without one', async () => {
  const folder = await tempFolder('cts-predictable-')
  const file = await recording(folder)
  const [header] = (await readFile(file, 'utf8')).split('\n')
  expect(
    (JSON.parse(header!) as { session: { options: object } }).session.options,
  ).not.toHaveProperty('deterministic')

  const one = await firstMade(['--from', file])
  const two = await firstMade(['--from', file])
  expect(one.token).not.toBe(two.token)
  expect(one.customer).not.toBe(two.customer)

  // A recording made before: its header says deterministic, as the
  // recorder's sandbox resolved it.
  const lines = (await readFile(file, 'utf8')).split('\n')
  const old = JSON.parse(lines[0]!) as {
    session: { options: Record<string, unknown> }
  }
  old.session.options.deterministic = true
  const before = join(folder, 'before.jsonl')
  await writeFile(before, [JSON.stringify(old), ...lines.slice(1)].join('\n'))
  const three = await firstMade(['--from', before])
  const four = await firstMade(['--from', before])
  expect(three.token).not.toBe(four.token)

  // Asked for, it is deterministic.
  const five = await firstMade(['--from', file, '--deterministic'])
  const six = await firstMade(['--from', file, '--deterministic'])
  expect(five).toEqual(six)
}, 90_000)

it('replays the export of a --deterministic server exactly, and that of a default server with new secrets', async () => {
  const folder = await tempFolder('cts-export-')
  const exported = async (args: string[]): Promise<string> => {
    const server = await startCli(['--port', '0', '--quiet', ...args])
    const answer = await fetch(`${server.url}/__sandbox/export?secrets=include`)
    expect(answer.status).toBe(200)
    const file = join(folder, `export-${args.length}.json`)
    await writeFile(file, await answer.text())
    expect(await server.stop()).toBe(0)
    return file
  }
  const deterministic = await exported(['--deterministic'])
  expect(await firstMade(['--from', deterministic])).toEqual(
    await firstMade(['--from', deterministic]),
  )
  const random = await exported([])
  expect((await firstMade(['--from', random])).token).not.toBe(
    (await firstMade(['--from', random])).token,
  )
}, 60_000)
