import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'

// scenarios.next() queued a scenario for an operation that does not exist
// (a typo such as 'createCustomers'): it never fired and held a slot, with
// no error. Over HTTP the same typo was refused as "not a scope of the form
// <resource>:<access>", which names the wrong thing. account() with no
// argument, and next() with no options, threw "Cannot read properties".

it('refuses a scenario for an operation that does not exist, naming the operations', async () => {
  const sandbox = createSandbox({ seed: 1 })
  await sandbox.ready
  const message =
    'Failed to queue a scenario: "createCustomers" is not an operation; use createCustomer, createToken or "*".'
  expect(() =>
    sandbox.scenarios.next('createCustomers' as never, { status: 503 }),
  ).toThrow(message)
  expect(() =>
    sandbox.account(DEMO_KEY_ONE).scenarios.next('createCustomers' as never, {
      status: 503,
    }),
  ).toThrow(message)
  expect(sandbox.scenarios.list()).toEqual([])
  expect(sandbox.account(DEMO_KEY_ONE).scenarios.list()).toEqual([])
})

it('names the operations when POST /__sandbox/scenarios gets one that does not exist', async () => {
  const sandbox = createSandbox({ seed: 1 })
  await sandbox.ready
  const response = await sandbox.fetch(
    new Request('http://api.test/__sandbox/scenarios', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ operation: 'createCustomers', status: 503 }),
    }),
  )
  expect(response.status).toBe(422)
  const body = await response.json()
  expect(body.errors).toEqual([
    expect.objectContaining({
      field: 'operation',
      message:
        'operation "createCustomers" is not one of createCustomer, createToken, *',
    }),
  ])
})

it('says what to pass when account() or scenarios.next() gets nothing', async () => {
  const sandbox = createSandbox({ seed: 1 })
  await sandbox.ready
  expect(() => sandbox.account(undefined as never)).toThrow(
    /^Failed to reach an account's controls: undefined is neither an account id nor an API key of this sandbox\. Pass the accountId or apiKey that createApiKey\(\) returned\.$/,
  )
  expect(() =>
    sandbox.scenarios.next('createCustomer', undefined as never),
  ).toThrow(
    'Failed to queue a scenario: give it a "status", a "delayMs" or "networkError: true".',
  )
})
