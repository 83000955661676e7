import { expect, it } from 'vitest'
import { postThrough } from '../_targets.ts'
import { DEMO_KEY_ONE, DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'
import { createSandbox } from '../../src/index.ts'

// Deleting an account through `sandbox.db` left its API keys, customers and
// tokens behind: its key still authenticated, its records stayed in the
// state, the export and the records limit, owned by no account.

const ACCOUNT = 'acct_DemoAccount001'
const OTHER = 'acct_DemoAccount002'

/** A sandbox where each demo account has a customer and a token from the API. */
async function prepared() {
  const sandbox = createSandbox({ seed: 1, uniqueEmail: true })
  await sandbox.ready
  const tokens: Record<string, string> = {}
  for (const [account, key] of [
    [ACCOUNT, DEMO_KEY_ONE],
    [OTHER, DEMO_KEY_TWO],
  ] as const) {
    const customer = await postThrough(
      sandbox,
      '/v1/customers',
      { name: 'Ada', email: 'ada@example.com' },
      key,
    )
    expect(customer.status).toBe(201)
    const token = await postThrough(
      sandbox,
      '/v2/tokens',
      { scopes: ['customers:write'] },
      key,
    )
    expect(token.status).toBe(201)
    tokens[account] = ((await token.json()) as { token: string }).token
  }
  return { sandbox, tokens }
}

const ownedBy = (
  sandbox: ReturnType<typeof createSandbox>,
  account: string,
) => ({
  apiKeys: sandbox.db.apiKeys.findMany((q) => q.where({ account_id: account })),
  customers: sandbox.db.customers.findMany((q) =>
    q.where({ account_id: account }),
  ),
  tokens: sandbox.db.tokens.findMany((q) => q.where({ account_id: account })),
})

it.each([
  [
    'delete',
    (sandbox: ReturnType<typeof createSandbox>) =>
      sandbox.db.accounts.delete((q) => q.where({ id: ACCOUNT })),
  ],
  [
    'deleteMany',
    (sandbox: ReturnType<typeof createSandbox>) =>
      sandbox.db.accounts.deleteMany((q) => q.where({ id: ACCOUNT })),
  ],
])(
  "takes the account's API keys, customers and tokens with it on %s, and leaves the other accounts as they were",
  async (_, remove) => {
    const { sandbox, tokens } = await prepared()
    const other = ownedBy(sandbox, OTHER)
    expect(ownedBy(sandbox, ACCOUNT).customers.length).toBeGreaterThan(0)

    remove(sandbox)

    expect(ownedBy(sandbox, ACCOUNT)).toEqual({
      apiKeys: [],
      customers: [],
      tokens: [],
    })
    const state = sandbox.state()
    expect(state.accounts.map((a) => a.id)).not.toContain(ACCOUNT)
    expect(state.customers.filter((c) => c.account_id === ACCOUNT)).toEqual([])
    expect(state.tokens.filter((t) => t.account_id === ACCOUNT)).toEqual([])
    // Its key and its token no longer authenticate.
    for (const credential of [DEMO_KEY_ONE, tokens[ACCOUNT]!]) {
      const refused = await postThrough(
        sandbox,
        '/v1/customers',
        { name: 'Grace', email: 'grace@example.com' },
        credential,
      )
      expect(refused.status).toBe(401)
      expect(((await refused.json()) as { code: string }).code).toBe(
        'invalid_credentials',
      )
    }

    // The other account keeps everything, its email taken as before.
    expect(ownedBy(sandbox, OTHER)).toEqual(other)
    const duplicate = await postThrough(
      sandbox,
      '/v1/customers',
      { name: 'Ada', email: 'ada@example.com' },
      tokens[OTHER]!,
    )
    expect(duplicate.status).toBe(409)
    const created = await postThrough(
      sandbox,
      '/v1/customers',
      { name: 'Grace', email: 'grace@example.com' },
      DEMO_KEY_TWO,
    )
    expect(created.status).toBe(201)
  },
)

it('leaves no API key, customer or token behind when the accounts are cleared', async () => {
  const { sandbox } = await prepared()
  sandbox.db.accounts.clear()
  expect(sandbox.db.apiKeys.count()).toBe(0)
  expect(sandbox.db.customers.count()).toBe(0)
  expect(sandbox.db.tokens.count()).toBe(0)
  expect(sandbox.state()).toMatchObject({
    accounts: [],
    customers: [],
    tokens: [],
  })
})
