import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { DEMO_KEY_ONE } from '../../src/fixtures.ts'
import type { Sandbox } from '../../src/sandbox.ts'

// With `deterministic: true`, a sandbox that loaded saved data (a browser
// tab's `persist` after a reload, `load()` of a dump) drew its token secrets
// from the start of the seed's stream again: the next token minted got the
// secret of a saved token, so one secret named two tokens of different
// scopes and lifetimes. Ids were drawn again until unused; secrets were not.

async function mint(sandbox: Sandbox, scopes: string[]) {
  const response = await sandbox.fetch(
    new Request('https://api.example.test/v2/tokens', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${DEMO_KEY_ONE}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ scopes, expires_in: 600 }),
    }),
  )
  expect(response.status).toBe(201)
  return (await response.json()) as { id: string; token: string }
}

it('mints a secret no saved token has after loading, and each token keeps its scopes', async () => {
  const before = createSandbox({ deterministic: true })
  await before.ready
  const saved = await mint(before, ['customers:write'])

  const after = createSandbox({ deterministic: true })
  await after.ready
  await after.load(before.dump())
  const minted = await mint(after, ['customers:read'])
  expect(minted.id).not.toBe(saved.id)
  expect(minted.token).not.toBe(saved.token)

  // The saved token still writes: its secret names it alone.
  const created = await after.fetch(
    new Request('https://api.example.test/v1/customers', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${saved.token}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
    }),
  )
  expect(created.status).toBe(201)
})
