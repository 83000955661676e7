import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'

// load(), createSandbox({ from }) and a data file took saved data in which
// two customers shared an id, or an API key of one account had the secret
// of another account's key: the copy answered as whichever came last, so a
// key could act for an account it does not belong to.

const sandboxWithData = async () => {
  const sandbox = createSandbox({ seed: 1 })
  await sandbox.ready
  return sandbox
}

it('refuses saved data in which two customers share an id, and keeps its data', async () => {
  const sandbox = await sandboxWithData()
  const data = await sandbox.dump()
  const count = sandbox.customers.count()
  const copy = { ...data.customers[0]!, email: 'copy@example.com' }
  await expect(
    sandbox.load({ ...data, customers: [...data.customers, copy] }),
  ).rejects.toThrow(
    `Failed to load sandbox data: customers.${count}.id: "${copy.id}" is already the id of another record of customers.`,
  )
  expect(sandbox.customers.count()).toBe(count)
})

it('refuses saved data in which a key of another account has the secret of a key', async () => {
  const sandbox = await sandboxWithData()
  const data = await sandbox.dump()
  const copy = {
    ...data.api_keys[0]!,
    id: 'key_copy',
    account_id: 'acct_DemoAccount002',
    secret: DEMO_KEY_ONE,
  }
  await expect(
    sandbox.load({ ...data, api_keys: [...data.api_keys, copy] }),
  ).rejects.toThrow(
    `Failed to load sandbox data: api_keys.${data.api_keys.length}.secret: the secret is already another API key's or token's; each credential needs a secret of its own.`,
  )
  const session = await sandbox.export()
  expect(() =>
    createSandbox({
      from: {
        ...session,
        data: { ...session.data, api_keys: [...session.data.api_keys, copy] },
      },
    }),
  ).toThrow(
    /^Failed to create a sandbox from a session: data\.api_keys\.\d+\.secret: the secret is already another API key's or token's/,
  )
})
