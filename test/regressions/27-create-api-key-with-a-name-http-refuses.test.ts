import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'

// sandbox.createApiKey({ accountName }) took what POST /__sandbox/api-keys
// refuses: an empty name, a name of a million characters; and a name that
// is not a string failed inside @msw/data with "does not match the schema.
// Please see the schema validation errors above", printed on the console.

it('refuses an account name that POST /__sandbox/api-keys refuses, with a message that says why', async () => {
  const sandbox = createSandbox({ customersPerAccount: 0 })
  await sandbox.ready
  const accounts = sandbox.accounts.list().length
  const create = (accountName: unknown) =>
    sandbox.createApiKey({ accountName } as { accountName: string })

  await expect(create(5)).rejects.toThrow(
    new TypeError(
      'Failed to create an API key: accountName must be a string (got number).',
    ),
  )
  await expect(create('')).rejects.toThrow(RangeError)
  await expect(create('')).rejects.toThrow(
    /^Failed to create an API key: accountName must be 1 to 200 characters long as sent \(got 0\)\.$/,
  )
  await expect(create('x'.repeat(201))).rejects.toThrow(/\(got 201\)/)
  await expect(create('\u200b')).rejects.toThrow(/visible character/)
  expect(sandbox.accounts.list()).toHaveLength(accounts)

  const response = await sandbox.fetch('http://localhost/__sandbox/api-keys', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ account_name: '' }),
  })
  expect(response.status).toBe(422)

  const { accountId } = await create('Acme')
  expect(sandbox.accounts.get(accountId)?.name).toBe('Acme')
})
