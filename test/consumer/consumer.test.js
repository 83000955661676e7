// Run by .ci/run in a scratch project that installed the packed tarball:
// it may use only the published entry points, as a consumer would.
import { setupServer } from 'msw/node'
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest'
import { createSandbox, DEMO_KEY_ONE } from 'customer-token-sandbox'
import { createSandboxServer } from 'customer-token-sandbox/node'

const sandbox = createSandbox({ seed: 1 })
const server = setupServer(...sandbox.handlers)
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }))
beforeEach(() => sandbox.reset())
afterAll(() => server.close())

const post = (url, body, key = DEMO_KEY_ONE) =>
  fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  })

it('creates a customer and a token through setupServer', async () => {
  const customer = await post('https://api.example.test/v1/customers', {
    name: 'Ada',
    email: 'ada@example.com',
  })
  expect(customer.status).toBe(201)
  expect(Object.keys(await customer.json())).toEqual(['id', 'name', 'email'])
  const token = await post('https://api.example.test/v2/tokens', {
    scopes: ['customers:read'],
  })
  expect(token.status).toBe(201)
  expect((await token.json()).token_type).toBe('Bearer')
  expect(sandbox.journal.list()).toHaveLength(2)
})

it('starts the standalone server from the node entry', async () => {
  const running = await createSandboxServer({ port: 0 })
  try {
    const health = await fetch(`${running.url}/__sandbox/health`)
    expect(await health.json()).toEqual({ status: 'ok' })
  } finally {
    await running.close()
  }
})
