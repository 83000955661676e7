// @ts-check
// Run by .ci/run in a scratch project that installed the packed tarball, as
// a consumer would: vitest runs it, then tsc --checkJs checks that the types
// resolve through the package's exports. Not part of the main suite (which
// takes test/**/*.test.ts); it imports only the package, as the README's
// first snippet does, on msw 2 + Vitest 4 + Node 20 and msw 3 + Vitest 5 +
// Node 24.
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest'
import { createSandbox } from 'customer-token-sandbox'
import { DEMO_KEY_ONE } from 'customer-token-sandbox/fixtures'
import { setupSandboxServer } from 'customer-token-sandbox/node'

const sandbox = createSandbox({ seed: 1 })
const server = setupSandboxServer(sandbox, { onUnhandled: 'error' })
beforeAll(() => server.listen())
beforeEach(() => sandbox.reset())
afterAll(() => server.close())

/**
 * @param {string} path
 * @param {unknown} body
 * @param {string} [key]
 */
const post = (path, body, key = DEMO_KEY_ONE) =>
  fetch(`https://api.example.test${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  })

it('creates a customer and a token through setupSandboxServer', async () => {
  /** @type {import('customer-token-sandbox').CreateCustomerBody} */
  const body = { name: 'Ada', email: 'ada@example.com' }
  const created = await post('/v1/customers', body)
  expect(created.status).toBe(201)
  /** @type {import('customer-token-sandbox').Customer} */
  const customer = await created.json()
  expect(Object.keys(customer)).toEqual(['id', 'name', 'email'])
  expect(sandbox.customers.get(customer.id)?.email).toBe('ada@example.com')

  /** @type {import('customer-token-sandbox').CreateTokenBody} */
  const request = { scopes: ['customers:write'], expires_in: 60 }
  const issued = await post('/v2/tokens', request)
  expect(issued.status).toBe(201)
  /** @type {import('customer-token-sandbox').Token} */
  const token = await issued.json()
  expect(token.token_type).toBe('Bearer')

  // The token works on version 1 until the sandbox clock passes its expiry.
  expect((await post('/v1/customers', body, token.token)).status).toBe(201)
  sandbox.clock.advance(60_000)
  const expired = await post('/v1/customers', body, token.token)
  expect(expired.status).toBe(401)
  /** @type {import('customer-token-sandbox').Problem} */
  const problem = await expired.json()
  expect(problem.code).toBe('token_expired')

  /** @type {import('customer-token-sandbox').JournalEntry[]} */
  const journal = sandbox.journal.list()
  expect(journal.map((entry) => entry.status)).toEqual([401, 201, 201, 201])
})
