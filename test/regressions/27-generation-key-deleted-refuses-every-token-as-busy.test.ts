// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'
import { emptyFleet, postCustomer } from '../_servers.ts'

// Found by an outside tester: with the key that names the current
// generation deleted by hand (`DEL {ns}:gen`), every script that checks a
// generation read each write as decided on one a reset left: every token
// create answered 503 "Other replicas wrote first 50 times in a row", on
// every replica and every retry, while health said ok, until a reset. The
// key is set again from the log's last whole state, which names it.

const mint = (url: string, key = DEMO_KEY_TWO) =>
  fetch(`${url}/v2/tokens`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ scopes: ['customers:write'] }),
  })

it('mints tokens again once the key naming the generation was deleted by hand', async () => {
  const { start, client } = await emptyFleet('gen-deleted', {
    limits: { records: 100 },
  })
  const [first, second] = [await start(), await start()]
  expect((await mint(first.url)).status).toBe(201)
  const named = await client.get('{gen-deleted}:gen')
  expect(named).not.toBeNull()

  expect(await client.del('{gen-deleted}:gen')).toBe(1)
  const minted = await mint(first.url)
  expect(minted.status).toBe(201)
  const { token } = (await minted.json()) as { token: string }
  expect(await client.get('{gen-deleted}:gen')).toBe(named)

  // A replica that never loaded the account finds the token, and the
  // count limits.records is kept against takes creates past its room.
  expect(await client.del('{gen-deleted}:gen')).toBe(1)
  const withToken = await postCustomer(
    second.url,
    { name: 'Ada', email: 'ada@example.com' },
    { headers: { authorization: `Bearer ${token}` } },
  )
  expect(withToken.status).toBe(201)
  expect(await client.del('{gen-deleted}:gen')).toBe(1)
  for (let n = 0; n < 40; n++) {
    const created = await postCustomer(second.url, {
      name: `Customer ${n}`,
      email: `c${n}@example.com`,
    })
    expect(created.status).toBe(201)
  }
  expect(await client.get('{gen-deleted}:gen')).toBe(named)
  const health = await fetch(`${second.url}/__sandbox/health`)
  expect(((await health.json()) as { status: string }).status).toBe('ok')
})
