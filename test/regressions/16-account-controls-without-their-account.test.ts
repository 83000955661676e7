import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'

// An API key whose account record is gone (the account deleted through
// sandbox.db, or the key seeded there for an account never created) still
// authenticates, but /__sandbox/account/* answered it 500 internal_error.

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

it("answers a key whose account was deleted through sandbox.db with that account's controls", async () => {
  const sandbox = createSandbox({ seed: 1 })
  await sandbox.ready
  sandbox.db.accounts.delete((q) => q.where({ id: 'acct_DemoAccount002' }))
  const clock = await call(
    sandbox,
    'POST',
    '/__sandbox/account/clock',
    DEMO_KEY_TWO,
    {
      advance_seconds: 60,
    },
  )
  expect(clock.status).toBe(200)
  expect(clock.body).toMatchObject({
    account_id: 'acct_DemoAccount002',
    own: true,
  })
  const requests = await call(
    sandbox,
    'GET',
    '/__sandbox/account/requests',
    DEMO_KEY_TWO,
  )
  expect(requests.status).toBe(200)
  const scenarios = await call(
    sandbox,
    'POST',
    '/__sandbox/account/scenarios',
    DEMO_KEY_TWO,
    {
      operation: 'createCustomer',
      status: 503,
    },
  )
  expect(scenarios.status).toBe(201)
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
