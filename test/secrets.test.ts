import { readFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { DEFAULT_ACCOUNTS } from '../fixtures/demo-keys.ts'
import { overHttp, send } from './_targets.ts'

const FULL_SECRET = /(sk_test_[0-9A-Za-z]{24}|tok_test_[0-9A-Za-z]{32})/g

it('shows no full secret in state, journal, errors or the document during a full run', async () => {
  const client = await overHttp.start({ seed: 1 })
  const key = DEFAULT_ACCOUNTS[0]!.apiKeys[0]!.key
  const minted = await send(client, 'POST', '/v2/tokens', {
    key,
    body: { scopes: ['customers:write'] },
  })
  const token: string = minted.body.token
  const { apiKey } = await client.sandbox.createApiKey({
    accountName: 'Secret Test',
  })
  const secrets = [key, token, apiKey]
  const outputs: string[] = []
  for (const credential of secrets) {
    outputs.push(
      (
        await send(client, 'POST', '/v1/customers', {
          key: credential,
          body: { name: 'A', email: 'a@example.com' },
        })
      ).text,
    )
    outputs.push(
      (
        await send(client, 'POST', '/v1/customers', {
          key: credential,
          body: { name: '' },
        })
      ).text,
    )
    outputs.push(
      (
        await send(client, 'POST', '/v2/tokens', {
          key: credential,
          body: { scopes: [credential] },
        })
      ).text,
    )
    outputs.push(
      (
        await send(client, 'POST', '/v1/customers', {
          key: `${credential}x`,
          body: {},
        })
      ).text,
    )
  }
  for (const path of [
    '/__sandbox/state',
    '/__sandbox/requests',
    '/__sandbox/assumptions',
    '/openapi.json',
  ]) {
    outputs.push((await send(client, 'GET', path)).text)
  }
  outputs.push(
    JSON.stringify(client.sandbox.state()),
    JSON.stringify(client.sandbox.journal.list()),
  )
  outputs.push(
    await readFile(new URL('../openapi.json', import.meta.url), 'utf8'),
  )
  await client.close()
  const everything = outputs.join('\n')
  for (const secret of secrets) expect(everything).not.toContain(secret)
  expect(everything.match(FULL_SECRET) ?? []).toEqual([])
  // The masked forms are there instead.
  expect(everything).toContain(`sk_test_…${key.slice(-4)}`)
})
