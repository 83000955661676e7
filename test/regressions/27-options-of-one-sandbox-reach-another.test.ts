import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { DEFAULT_ACCOUNTS } from '../../src/fixtures.ts'

// Two sandboxes never share anything, yet the default scopes and fixture
// accounts were one array for every sandbox of the process: a key or a
// scope added to one sandbox's `options` (from JavaScript, or TypeScript
// past its `readonly`) was a working key and scope of every sandbox created
// after it.

const NEW_KEY = 'sk_test_AddedToAnotherSandbox001'

type Mutable = {
  scopes: string[]
  fixtures: { accounts: { apiKeys: { key: string }[] }[] }
}

const mintWith = (sandbox: ReturnType<typeof createSandbox>, key: string) =>
  sandbox.fetch('https://api.example.test/v2/tokens', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ scopes: ['admin:everything'], expires_in: 60 }),
  })

it("keeps a change to one sandbox's options out of every other sandbox", async () => {
  const first = createSandbox()
  const options = first.options as unknown as Mutable
  options.scopes.push('admin:everything')
  options.fixtures.accounts[0]!.apiKeys.push({ key: NEW_KEY })

  const second = createSandbox()
  await second.ready
  expect(second.options.scopes).not.toContain('admin:everything')
  expect(second.options.fixtures.accounts).toEqual(DEFAULT_ACCOUNTS)
  expect((await mintWith(second, NEW_KEY)).status).toBe(401)
  expect(DEFAULT_ACCOUNTS[0]!.apiKeys.map((key) => key.key)).not.toContain(
    NEW_KEY,
  )
})

it('copies the scopes and fixtures a caller passes, as the other options', async () => {
  const scopes = ['customers:read', 'tokens:write']
  const first = createSandbox({ scopes })
  const second = createSandbox({ scopes })
  ;(first.options as unknown as Mutable).scopes.push('admin:everything')
  expect(second.options.scopes).toEqual(['customers:read', 'tokens:write'])
  expect(scopes).toEqual(['customers:read', 'tokens:write'])
})
