// In ESM mode Jest injects `test`, `expect` and the hooks, but not `jest`
// itself: that one is imported.
import { jest } from '@jest/globals'
import { createSandbox } from 'customer-token-sandbox'
import { DEMO_KEY_ONE } from 'customer-token-sandbox/fixtures'
import { setupSandboxServer } from 'customer-token-sandbox/node'

const onRequest = jest.fn()
const sandbox = createSandbox({ seed: 1, onRequest })
const server = setupSandboxServer(sandbox, { onUnhandled: 'error' })

beforeAll(() => server.listen())
beforeEach(() => {
  sandbox.reset()
  onRequest.mockClear()
})
afterAll(() => server.close())

const createCustomer = (body, key = DEMO_KEY_ONE) =>
  fetch('https://api.example.test/v1/customers', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  })

test('creates a customer', async () => {
  const response = await createCustomer({
    name: 'Ada',
    email: 'ada@example.com',
  })
  expect(response.status).toBe(201)
  expect(await response.json()).toEqual({
    id: expect.stringMatching(/^cus_/),
    name: 'Ada',
    email: 'ada@example.com',
  })
  expect(sandbox.journal.last()).toMatchObject({ status: 201 })
  expect(onRequest).toHaveBeenCalledWith(
    expect.objectContaining({ path: '/v1/customers', status: 201 }),
  )
})

test('answers a fault the test asked for', async () => {
  sandbox.scenarios.next('createCustomer', { status: 503 })
  const response = await createCustomer({
    name: 'Ada',
    email: 'ada@example.com',
  })
  expect(response.status).toBe(503)
  expect(response.headers.get('retry-after')).toBe('1')
})

test('expires a token when the sandbox clock moves', async () => {
  const minted = await fetch('https://api.example.test/v2/tokens', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ scopes: ['customers:write'], expires_in: 60 }),
  })
  const { token } = await minted.json()
  sandbox.clock.advance(61_000)
  const response = await createCustomer(
    { name: 'Ada', email: 'ada@example.com' },
    token,
  )
  expect(response.status).toBe(401)
  expect((await response.json()).code).toBe('token_expired')
})
