import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'

// An API key whose account record is gone (the account deleted through
// sandbox.db, or the key seeded there for an account never created) was
// answered 500 internal_error by /__sandbox/account/*. Deleting an account
// now deletes its keys too; a key seeded for an account never created still
// authenticates.

const call = async (
  sandbox: ReturnType<typeof createSandbox>,
  method: string,
  path: string,
  key: string,
  body?: unknown,
) => {
  const response = await sandbox.fetch(
    new Request(`http://api.test${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    }),
  )
  return { status: response.status, body: await response.json() }
}

it('answers a key whose account was deleted through sandbox.db with 401, the key gone with its account', async () => {
  const sandbox = createSandbox({ seed: 1 })
  await sandbox.ready
  sandbox.db.accounts.delete((q) => q.where({ id: 'acct_DemoAccount002' }))
  // @note Deleting an account deletes its keys (see
  // 16-account-delete-leaves-orphans): the key is unknown, never a 500.
  for (const [method, path, body] of [
    ['POST', '/__sandbox/account/clock', { advance_seconds: 60 }],
    ['GET', '/__sandbox/account/requests', undefined],
    [
      'POST',
      '/__sandbox/account/scenarios',
      { operation: 'createCustomer', status: 503 },
    ],
  ] as const) {
    const answer = await call(sandbox, method, path, DEMO_KEY_TWO, body)
    expect(answer.status).toBe(401)
    expect(answer.body).toMatchObject({ code: 'invalid_credentials' })
  }
})

it('answers a key seeded through sandbox.db for an account that was never created', async () => {
  const sandbox = createSandbox({ seed: 1 })
  await sandbox.ready
  const key = 'sk_test_KeyOfAnAccountNeverMade01'
  await sandbox.db.apiKeys.create({
    id: 'key_orphan',
    account_id: 'acct_never',
    secret: key,
    revoked: false,
    created_at: new Date().toISOString(),
  })
  const clock = await call(sandbox, 'GET', '/__sandbox/account/clock', key)
  expect(clock.status).toBe(200)
  expect(clock.body).toMatchObject({ account_id: 'acct_never', own: false })
})
