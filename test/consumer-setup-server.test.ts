import { setupServer } from 'msw/node'
import { afterAll, beforeAll, beforeEach, expect, it, vi } from 'vitest'
import { createSandbox } from '../src/index.ts'
import { DEMO_KEY_ONE } from '../src/fixtures.ts'

// Exactly as a consumer's suite uses the sandbox.
const sandbox = createSandbox({ seed: 1 })
const server = setupServer(...sandbox.handlers)

// msw 2 calls the option onUnhandledRequest, msw 3 onUnhandledFrame.
const strict = {
  onUnhandledRequest: 'error',
  onUnhandledFrame: 'error',
} as Parameters<typeof server.listen>[0]
beforeAll(() => server.listen(strict))
beforeEach(() => sandbox.reset())
afterAll(() => server.close())

const API = 'https://api.example.test'
const post = (path: string, body: unknown, key: string | null = DEMO_KEY_ONE) =>
  fetch(`${API}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key && { authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify(body),
  })

it('creates a customer and a token with fetch', async () => {
  const customer = await post('/v1/customers', {
    name: 'Ada',
    email: 'ada@example.com',
  })
  expect(customer.status).toBe(201)
  expect(await customer.json()).toEqual({
    id: expect.stringMatching(/^cus_/),
    name: 'Ada',
    email: 'ada@example.com',
  })
  const token = await post('/v2/tokens', { scopes: ['customers:read'] })
  expect(token.status).toBe(201)
  expect(token.headers.get('cache-control')).toBe('no-store')
})

it("starts every test from the seed: the last test's customer is gone", () => {
  expect(sandbox.customers.list().some((c) => c.name === 'Ada')).toBe(false)
  expect(sandbox.journal.list()).toEqual([])
})

it('answers 401 with a Bearer challenge without a key', async () => {
  const response = await post(
    '/v1/customers',
    { name: 'Ada', email: 'ada@example.com' },
    null,
  )
  expect(response.status).toBe(401)
  expect(response.headers.get('www-authenticate')).toBe(
    'Bearer realm="sandbox"',
  )
  expect(response.headers.get('content-type')).toBe('application/problem+json')
})

it('expires a token as Vitest fake timers move Date.now', async () => {
  vi.useFakeTimers({ toFake: ['Date'] })
  try {
    vi.setSystemTime(new Date('2030-01-01T00:00:00Z'))
    const { token } = await (
      await post('/v2/tokens', { scopes: ['customers:write'], expires_in: 60 })
    ).json()
    expect(
      (
        await post(
          '/v1/customers',
          { name: 'A', email: 'a@example.com' },
          token,
        )
      ).status,
    ).toBe(201)
    vi.advanceTimersByTime(60_000)
    const expired = await post(
      '/v1/customers',
      { name: 'A', email: 'a@example.com' },
      token,
    )
    expect(expired.status).toBe(401)
    expect((await expired.json()).code).toBe('token_expired')
  } finally {
    vi.useRealTimers()
  }
})

it('makes fetch reject for a network error scenario', async () => {
  sandbox.scenarios.next('createCustomer', { networkError: true })
  await expect(
    post('/v1/customers', { name: 'A', email: 'a@example.com' }),
  ).rejects.toThrow(TypeError)
})

it('lets the test verify what was sent through the journal', async () => {
  await post('/v1/customers', { name: 'A', email: 'a@example.com' })
  expect(sandbox.journal.last()).toMatchObject({
    method: 'POST',
    path: '/v1/customers',
    status: 201,
    credential: 'sk_test_…0001',
    account_id: 'acct_DemoAccount001',
  })
})

it('matches only the baseUrl it is given', async () => {
  const narrow = createSandbox({ baseUrl: 'https://api.acme.test/api' })
  server.use(...narrow.handlers)
  await narrow.ready
  const matched = await fetch('https://api.acme.test/api/v1/customers', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name: 'A', email: 'a@example.com' }),
  })
  expect(matched.status).toBe(201)
  expect(narrow.customers.count()).toBe(51)
  const elsewhere = await narrow.fetch(
    new Request('https://elsewhere.test/api/v1/customers', {
      method: 'POST',
    }),
  )
  expect(elsewhere.status).toBe(404)
  expect((await elsewhere.json()).code).toBe('not_found')
  expect(narrow.customers.count()).toBe(51)
  server.resetHandlers()
})
