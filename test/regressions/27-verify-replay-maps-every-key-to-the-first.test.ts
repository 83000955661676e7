import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE, DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'
import {
  postJson,
  runCli,
  startCli,
  startRecording,
  tempFolder,
} from '../_servers.ts'

// Found by replaying, with `verify --from`, a recording of a sandbox (the
// "live service") run with --unique-email, against a --config that says so
// too: the second demo key and a token it minted created an email that the
// first key then created in its own account, and verify reported
// customer.email-uniqueness as differing (201 from the service, 409 from
// the sandbox), exit 1. The replay put every masked key in the place of the
// first demo key, so every call acted for account one; with fixtures of the
// config's own, which hold no demo key, every call was refused (401). Each
// recorded credential is now told as --from tells it (recordedCredentials):
// a key by its masked form, a token by the exchange that minted it.

const post = (url: string, path: string, credential: string, body: unknown) =>
  postJson(url, path, body, credential)

const create = async (url: string, credential: string, email: string) =>
  (await post(url, '/v1/customers', credential, { name: 'Same', email })).status

/**
 * Records `client` against a sandbox started as the live service with the
 * options of `config`, then replays the recording with `verify --from`
 * configured alike; its exit code and output.
 */
async function recordAndVerify(
  config: Record<string, unknown>,
  client: (url: string) => Promise<void>,
): Promise<{ code: number | string; stdout: string }> {
  const folder = await tempFolder('cts-verify-replay-')
  const configFile = join(folder, 'config.json')
  await writeFile(configFile, JSON.stringify(config))
  const live = await startCli([
    '--port',
    '0',
    '--quiet',
    '--config',
    configFile,
  ])
  const file = join(folder, 'session.jsonl')
  const { cli: recorder, url } = await startRecording(live.url, file)
  await client(url)
  expect(await recorder.stop('SIGINT')).toBe(0)
  expect(await live.stop()).toBe(0)
  const verify = runCli(['verify', '--from', file, '--config', configFile])
  const code = await verify.exited
  return { code, stdout: verify.stdout() }
}

it('replays what the second demo key and its token did as the second account', async () => {
  const { code, stdout } = await recordAndVerify(
    { uniqueEmail: true },
    async (url) => {
      const minted = await post(url, '/v2/tokens', DEMO_KEY_TWO, {
        scopes: ['customers:write'],
      })
      expect(minted.status).toBe(201)
      const { token } = (await minted.json()) as { token: string }
      expect(await create(url, token, 'by-token@example.com')).toBe(201)
      expect(await create(url, DEMO_KEY_TWO, 'two@example.com')).toBe(201)
      // Each email again in the first account: another account's, so taken.
      expect(await create(url, DEMO_KEY_ONE, 'by-token@example.com')).toBe(201)
      expect(await create(url, DEMO_KEY_ONE, 'two@example.com')).toBe(201)
      // And once in its own account: refused.
      expect(await create(url, DEMO_KEY_TWO, 'two@example.com')).toBe(409)
    },
  )
  expect(stdout).toMatch(/customer\.email-uniqueness +matches +1 recorded/)
  expect(stdout).toContain(' 0 differ,')
  expect(code).toBe(0)
}, 60_000)

it("replays the keys of the config's own fixtures, which hold no demo key, as theirs", async () => {
  const first = 'sk_test_OwnFixtureAccountOne0001'
  const second = 'sk_test_OwnFixtureAccountTwo0002'
  const { code, stdout } = await recordAndVerify(
    {
      uniqueEmail: true,
      fixtures: {
        accounts: [
          {
            id: 'acct_OwnAccountOne1',
            name: 'One',
            apiKeys: [{ key: first }],
          },
          {
            id: 'acct_OwnAccountTwo2',
            name: 'Two',
            apiKeys: [{ key: second }],
          },
        ],
      },
    },
    async (url) => {
      expect(await create(url, second, 'shared@example.com')).toBe(201)
      expect(await create(url, first, 'shared@example.com')).toBe(201)
      expect(await create(url, second, 'shared@example.com')).toBe(409)
    },
  )
  expect(stdout).toMatch(/customer\.success-status +matches +2 recorded/)
  expect(stdout).toMatch(/customer\.email-uniqueness +matches +1 recorded/)
  expect(stdout).toContain(' 0 differ,')
  expect(code).toBe(0)
}, 60_000)
