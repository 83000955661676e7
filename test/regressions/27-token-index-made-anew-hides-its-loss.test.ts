// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { createNamed, emptyFleet, postCustomer, postJson } from '../_servers.ts'

// Found by an outside tester: a generation's index of tokens begins with a
// field no digest is, so that a replica tells an index Redis lost from one
// without the token. The next token minted wrote the index anew, without
// that field, and the loss was hidden: a replica that had not loaded the
// account answered an earlier token 401 ("not a known API key or token"),
// health ok. A token is now indexed only in an index that still holds the
// field: once the index is lost, a mint answers 503 and health says
// REDIS_LOST_RECORDS, as a token looked up does.

it('refuses to make a lost index of tokens anew, and says so', async () => {
  const { start, client } = await emptyFleet('index-anew')
  const writer = await start()
  const mint = () =>
    postJson(
      writer.url,
      '/v2/tokens',
      { scopes: ['customers:write'] },
      DEMO_KEY_ONE,
    )
  const first = await mint()
  expect(first.status).toBe(201)
  const { token } = (await first.json()) as { token: string }
  const [index, ...others] = await client.keys('{index-anew}:g:*:tokens')
  expect(others).toEqual([])
  await client.del(index!)

  const next = await mint()
  expect(next.status).toBe(503)
  expect(((await next.json()) as { code: string }).code).toBe(
    'storage_unavailable',
  )
  expect(await client.exists(index!)).toBe(0)
  const reader = await start()
  const refused = await postCustomer(
    reader.url,
    { name: 'Ada', email: 'ada@example.com' },
    { headers: { authorization: `Bearer ${token}` } },
  )
  expect(refused.status).toBe(503)
  const health = await fetch(`${reader.url}/__sandbox/health`)
  expect(await health.json()).toMatchObject({
    status: 'degraded',
    storage: { code: 'REDIS_LOST_RECORDS' },
  })
  // A reset mends it.
  expect((await postJson(reader.url, '/__sandbox/reset', {})).status).toBe(200)
  expect((await createNamed(reader.url, 'After')).status).toBe(201)
}, 30_000)
