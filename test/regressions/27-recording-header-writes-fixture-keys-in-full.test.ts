import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'
import { startCli, startRecording, tempFolder } from '../_servers.ts'

// Found by reading a recording made with `record --config` whose fixtures
// hold a key of the user's own (a copy of a staging key): every exchange
// showed it masked, but the header line, the recorder's sandbox as
// sandbox.export() gives it, held it in full twice (the fixtures of its
// options and its API keys), with or without --keep-secrets. The keys but
// the documented ones (public) are now masked there unless --keep-secrets,
// as the tokens are; --from gives a masked key a new secret and says so.

const OWN_KEY = 'sk_test_StagingKeyCopiedHereA9fZ'
const OWN_ACCOUNT = 'acct_StagingCopy001'
const FIXTURES = {
  fixtures: {
    accounts: [
      { id: OWN_ACCOUNT, name: 'Staging', apiKeys: [{ key: OWN_KEY }] },
      {
        id: 'acct_DemoAccount002',
        name: 'Demo Account Two',
        apiKeys: [{ key: DEMO_KEY_TWO }],
      },
    ],
  },
}

const create = async (url: string, key: string, name: string) =>
  (
    await fetch(`${url}/v1/customers`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name, email: `${name}@example.com` }),
    })
  ).status

/**
 * Records a customer made with the key of the config's own fixtures, against
 * a sandbox with the same config as the live service; the file.
 */
async function recordWithOwnKey(recordArgs: string[] = []): Promise<string> {
  const folder = await tempFolder('cts-own-keys-')
  const config = join(folder, 'config.json')
  await writeFile(config, JSON.stringify(FIXTURES))
  const live = await startCli(['--port', '0', '--quiet', '--config', config])
  const file = join(folder, 'session.jsonl')
  const { cli, url } = await startRecording(live.url, file, [
    '--config',
    config,
    ...recordArgs,
  ])
  expect(await create(url, OWN_KEY, 'recorded')).toBe(201)
  expect(await cli.stop('SIGINT')).toBe(0)
  expect(await live.stop()).toBe(0)
  return file
}

const accountOf = async (url: string, name: string) =>
  (
    (await (await fetch(`${url}/__sandbox/state`)).json()) as {
      customers: { name: string; account_id: string }[]
    }
  ).customers.find((c) => c.name === name)?.account_id

it('masks the keys of its own fixtures in the header; --from gives them new secrets and says so', async () => {
  const file = await recordWithOwnKey()
  const text = await readFile(file, 'utf8')
  expect(text).not.toContain(OWN_KEY)
  const header = text.split('\n', 1)[0]!
  expect(header).toContain('"secret":"sk_test_…A9fZ"')
  expect(header).toContain('"key":"sk_test_…A9fZ"')
  // The documented keys are public: kept, so that their holders get in.
  expect(header).toContain(DEMO_KEY_TWO)

  const sandbox = await startCli(['--port', '0', '--quiet', '--from', file])
  expect(await accountOf(sandbox.url, 'recorded')).toBe(OWN_ACCOUNT)
  expect(await create(sandbox.url, OWN_KEY, 'after')).toBe(401)
  expect(await create(sandbox.url, DEMO_KEY_TWO, 'after')).toBe(201)
  expect(sandbox.stderr()).toBe(
    'customer-token-sandbox: --from: the recording masked the API keys of its own fixtures (sk_test_…A9fZ), as record does without --keep-secrets: they were given new secrets, so a client holding one of them gets 401.\n',
  )
}, 60_000)

it('keeps them in full with --keep-secrets, and --from lets their holders in', async () => {
  const file = await recordWithOwnKey(['--keep-secrets'])
  const [header, ...exchanges] = (await readFile(file, 'utf8')).split('\n')
  expect(header).toContain(OWN_KEY)
  // The credential of an exchange stays masked either way.
  expect(exchanges.join('\n')).not.toContain(OWN_KEY)

  const sandbox = await startCli(['--port', '0', '--quiet', '--from', file])
  expect(await accountOf(sandbox.url, 'recorded')).toBe(OWN_ACCOUNT)
  expect(await create(sandbox.url, OWN_KEY, 'after')).toBe(201)
  expect(sandbox.stderr()).toBe('')
}, 60_000)

it('reads a recording of before, whose header held them in full without --keep-secrets', async () => {
  const kept = await recordWithOwnKey(['--keep-secrets'])
  const file = join(await tempFolder('cts-own-keys-before-'), 'before.jsonl')
  await writeFile(
    file,
    (await readFile(kept, 'utf8')).replace(
      '"keep_secrets":true',
      '"keep_secrets":false',
    ),
  )
  const sandbox = await startCli(['--port', '0', '--quiet', '--from', file])
  expect(await accountOf(sandbox.url, 'recorded')).toBe(OWN_ACCOUNT)
  expect(await create(sandbox.url, OWN_KEY, 'after')).toBe(201)
  expect(sandbox.stderr()).toBe('')
}, 60_000)
