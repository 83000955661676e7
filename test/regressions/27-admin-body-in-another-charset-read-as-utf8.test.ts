import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'

// A /__sandbox/ body that names another charset was read as UTF-8: the
// Latin-1 name "Ã©" (bytes C3 A9) made an account named "é" with a 201, and
// "Zoë" was refused as malformed UTF-8 without naming the charset. Both are
// refused as the API's operations refuse them, and nothing is made.

it.each([
  ['\u00c3\u00a9', 'read as another name'],
  ['Zo\u00eb', 'not UTF-8'],
])(
  'refuses the account name %s sent in Latin-1 (%s), and makes no account',
  async (name) => {
    const sandbox = createSandbox({ seed: 1 })
    await sandbox.ready
    const accounts = sandbox.db.accounts.count()
    const response = await sandbox.fetch(
      new Request('http://localhost/__sandbox/api-keys', {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=ISO-8859-1' },
        body: Buffer.from(JSON.stringify({ account_name: name }), 'latin1'),
      }),
    )
    expect(response.status).toBe(415)
    const problem = (await response.json()) as { code: string; detail: string }
    expect(problem.code).toBe('unsupported_media_type')
    expect(problem.detail).toMatch(/charset=ISO-8859-1.*send it as UTF-8/)
    expect(sandbox.db.accounts.count()).toBe(accounts)
  },
)

it.each(['application/json; charset=utf-8', 'application/json', 'text/plain'])(
  'still takes a body sent as %s',
  async (type) => {
    const sandbox = createSandbox({ seed: 1 })
    const response = await sandbox.fetch(
      new Request('http://localhost/__sandbox/api-keys', {
        method: 'POST',
        headers: { 'content-type': type },
        body: JSON.stringify({ account_name: 'Zo\u00eb' }),
      }),
    )
    expect(response.status).toBe(201)
    const { account_id } = (await response.json()) as { account_id: string }
    const account = sandbox.db.accounts.findFirst((q) =>
      q.where({ id: account_id }),
    )
    expect(account?.name).toBe('Zo\u00eb')
  },
)
