import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE, DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'
import { postJson, startCli, startRecording, tempFolder } from '../_servers.ts'

// Found by recording a sandbox (the "live service") through `record
// --keep-secrets`: with the second demo key, a token T was minted and the
// customer "Acct2 Only" created; `--from` the recording then put both in the
// first account. A customer created with T landed in account 1, and with
// --unique-email key 0001 was refused account 2's email while key 0002 could
// create it again. sessionOf() put every record of a recording in
// accounts[0]. Each record now belongs to the account of the credential that
// made it: a key of the session, told by its masked form, or a token minted
// earlier in the recording, whose account is its minting credential's.

const ACCOUNT_ONE = 'acct_DemoAccount001'
const ACCOUNT_TWO = 'acct_DemoAccount002'

const post = (url: string, path: string, credential: string, body: unknown) =>
  postJson(url, path, body, credential)

/** Mints a token with `credential` and returns its secret. */
async function mint(url: string, credential: string): Promise<string> {
  const answer = await post(url, '/v2/tokens', credential, {
    scopes: ['customers:write', 'tokens:write'],
  })
  expect(answer.status).toBe(201)
  return ((await answer.json()) as { token: string }).token
}

async function create(
  url: string,
  credential: string,
  name: string,
  email: string,
): Promise<number> {
  return (await post(url, '/v1/customers', credential, { name, email })).status
}

/**
 * Records `client` against a sandbox started as the live service with
 * `liveArgs`, through the record command with `recordArgs`; the file.
 */
async function recordSession(
  client: (url: string) => Promise<void>,
  {
    liveArgs = [],
    recordArgs = [],
  }: { liveArgs?: string[]; recordArgs?: string[] } = {},
): Promise<string> {
  const live = await startCli(['--port', '0', '--quiet', ...liveArgs])
  const file = join(await tempFolder('cts-accounts-'), 'session.jsonl')
  const { cli: recorder, url } = await startRecording(
    live.url,
    file,
    recordArgs,
  )
  await client(url)
  expect(await recorder.stop('SIGINT')).toBe(0)
  expect(await live.stop()).toBe(0)
  return file
}

interface State {
  customers: { name: string; account_id: string }[]
  tokens: { id: string; account_id: string }[]
}

const stateOf = async (url: string): Promise<State> =>
  (await (await fetch(`${url}/__sandbox/state`)).json()) as State

const accountOf = (state: State, name: string): string | undefined =>
  state.customers.find((c) => c.name === name)?.account_id

it('puts what the second demo key and its token made in the second account, secrets kept', async () => {
  let token = ''
  const file = await recordSession(
    async (url) => {
      token = await mint(url, DEMO_KEY_TWO)
      expect(await create(url, token, 'Acct2 Only', 'acct2@example.com')).toBe(
        201,
      )
      expect(
        await create(url, DEMO_KEY_ONE, 'Acct1 Only', 'acct1@example.com'),
      ).toBe(201)
    },
    { recordArgs: ['--keep-secrets'] },
  )
  const sandbox = await startCli([
    '--port',
    '0',
    '--quiet',
    '--unique-email',
    '--from',
    file,
  ])
  const state = await stateOf(sandbox.url)
  expect(accountOf(state, 'Acct2 Only')).toBe(ACCOUNT_TWO)
  expect(accountOf(state, 'Acct1 Only')).toBe(ACCOUNT_ONE)
  expect(state.tokens.map((t) => t.account_id)).toEqual([ACCOUNT_TWO])

  // The kept token still acts for the second account.
  expect(await create(sandbox.url, token, 'Made with T', 't@example.com')).toBe(
    201,
  )
  expect(accountOf(await stateOf(sandbox.url), 'Made with T')).toBe(ACCOUNT_TWO)
  // Emails are taken per account: account 2's is free in account 1.
  expect(
    await create(sandbox.url, DEMO_KEY_ONE, 'One', 'acct2@example.com'),
  ).toBe(201)
  expect(
    await create(sandbox.url, DEMO_KEY_TWO, 'Two', 'acct2@example.com'),
  ).toBe(409)
  expect(
    await create(sandbox.url, DEMO_KEY_TWO, 'Two', 'acct1@example.com'),
  ).toBe(201)
  expect(sandbox.stderr()).toBe('')
}, 60_000)

it('tells the accounts apart by masked keys and masked tokens, secrets masked', async () => {
  const file = await recordSession(async (url) => {
    // A token minted by a token of the second key: the chain is followed.
    const parent = await mint(url, DEMO_KEY_TWO)
    const child = await mint(url, parent)
    expect(
      await create(url, child, 'Via a token of a token', 'c@example.com'),
    ).toBe(201)
    // sk_test_…0001 is also the mask of persona keys: the demo key's account.
    expect(await create(url, DEMO_KEY_ONE, 'Key one', 'k1@example.com')).toBe(
      201,
    )
    expect(await create(url, DEMO_KEY_TWO, 'Key two', 'k2@example.com')).toBe(
      201,
    )
  })
  const sandbox = await startCli(['--port', '0', '--quiet', '--from', file])
  const state = await stateOf(sandbox.url)
  expect(accountOf(state, 'Via a token of a token')).toBe(ACCOUNT_TWO)
  expect(accountOf(state, 'Key one')).toBe(ACCOUNT_ONE)
  expect(accountOf(state, 'Key two')).toBe(ACCOUNT_TWO)
  expect(state.tokens).toEqual([])
  expect(sandbox.stderr()).toBe('')
}, 60_000)

it("puts what the service's own keys made in the first account, and says so when they are several", async () => {
  const folder = await tempFolder('cts-live-config-')
  const config = join(folder, 'live.json')
  const first = 'sk_test_LiveServiceFirstAccount1'
  const other = 'sk_test_LiveServiceOtherAccount2'
  await writeFile(
    config,
    JSON.stringify({
      fixtures: {
        accounts: [
          { id: 'acct_LiveAccountOne', name: 'One', apiKeys: [{ key: first }] },
          { id: 'acct_LiveAccountTwo', name: 'Two', apiKeys: [{ key: other }] },
        ],
      },
    }),
  )
  const file = await recordSession(
    async (url) => {
      const token = await mint(url, first)
      expect(await create(url, token, 'First live', 'f@example.com')).toBe(201)
      expect(await create(url, other, 'Other live', 'o@example.com')).toBe(201)
    },
    { liveArgs: ['--config', config], recordArgs: ['--keep-secrets'] },
  )
  const sandbox = await startCli(['--port', '0', '--quiet', '--from', file])
  const state = await stateOf(sandbox.url)
  expect(accountOf(state, 'First live')).toBe(ACCOUNT_ONE)
  expect(accountOf(state, 'Other live')).toBe(ACCOUNT_ONE)
  expect(state.tokens.map((t) => t.account_id)).toEqual([ACCOUNT_ONE])
  expect(sandbox.stderr()).toBe(
    `customer-token-sandbox: --from: what 2 credentials of the recording made (sk_test_…unt1, sk_test_…unt2) is all in the first account, ${ACCOUNT_ONE}: they are no keys of the sandbox, so which accounts of the service they stand for cannot be told.\n`,
  )
}, 60_000)
