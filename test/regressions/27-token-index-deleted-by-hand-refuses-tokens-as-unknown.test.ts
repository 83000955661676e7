// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { emptyFleet, expectRecordsLost } from '../_servers.ts'

// A replica finds the account of a token it has not loaded in its
// generation's index of tokens in Redis. An index deleted by hand read as
// an index without the token: every token of an account the replica had
// not loaded was refused 401, as if it did not exist, until a request with
// the account's API key loaded it. It is now refused with 503, naming the
// key, and health says degraded, as a lost list of records is; a token the
// index does not hold is still a 401, and a reset mends it.

const bearer = (credential: string) => ({
  authorization: `Bearer ${credential}`,
})

const mint = async (url: string): Promise<string> => {
  const response = await fetch(`${url}/v2/tokens`, {
    method: 'POST',
    headers: { ...bearer(DEMO_KEY_ONE), 'content-type': 'application/json' },
    body: JSON.stringify({ scopes: ['customers:write'] }),
  })
  expect(response.status).toBe(201)
  return ((await response.json()) as { token: string }).token
}

let made = 0
const createWith = (url: string, credential: string) =>
  fetch(`${url}/v1/customers`, {
    method: 'POST',
    headers: { ...bearer(credential), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Ada', email: `ada${++made}@example.com` }),
  })

it('refuses the tokens of an index Redis lost with 503, naming the key, and a reset mends it', async () => {
  const { start, client } = await emptyFleet('lostindex')
  const writer = await start()
  const token = await mint(writer.url)
  const reader = await start()
  // The index holds the token: found, and the account loaded for it.
  expect((await createWith(reader.url, token)).status).toBe(201)
  const unknown = `${token.slice(0, -4)}xxxx`
  expect((await createWith(reader.url, unknown)).status).toBe(401)

  const other = await start()
  const [index, ...others] = await client.keys('{lostindex}:g:*:tokens')
  expect(others).toEqual([])
  await client.del(index!)

  const refused = await createWith(other.url, token)
  expect(refused.status).toBe(503)
  expect(refused.headers.get('retry-after')).not.toBeNull()
  const problem = (await refused.json()) as { code: string; detail: string }
  expect(problem.code).toBe('storage_unavailable')
  expect(problem.detail).toContain('POST /__sandbox/reset')
  await expectRecordsLost(other.url, index!)
  // A replica that loaded the account finds its tokens without the index.
  expect((await createWith(reader.url, token)).status).toBe(201)

  const reset = await fetch(`${other.url}/__sandbox/reset`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
  expect(reset.status).toBe(200)
  expect((await fetch(`${other.url}/__sandbox/health`)).status).toBe(200)
  // The reset dropped the token; one made since is found by every replica.
  expect((await createWith(other.url, token)).status).toBe(401)
  const again = await mint(writer.url)
  expect((await createWith(other.url, again)).status).toBe(201)
})
