// @vitest-environment happy-dom
import { setupServer } from 'msw/node'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { createSandbox } from '../../src/index.ts'
import { postCustomer } from '../_requests.ts'

// Found by using the sandbox as its consumers do: in Vitest's happy-dom
// environment (a common one for front-end tests), every request through
// msw hung until the test timed out, and `sandbox.fetch` answered with a
// body that threw when read ("'Response' was constructed outside a Window
// context"). The answers were srvx's FastResponse, which builds on the
// base class of the global Response: happy-dom's cannot be built alone.

const sandbox = createSandbox({ seed: 1 })
const server = setupServer(...sandbox.handlers)
beforeAll(() => server.listen())
afterAll(() => server.close())

const create = (send: typeof fetch, key = DEMO_KEY_ONE) =>
  // @note On the page's own origin: msw 3 in happy-dom passes a
  // cross-origin fetch to the network, a handler of its own or not.
  postCustomer(
    location.origin,
    { name: 'Ada', email: 'ada@example.com' },
    { fetch: send, headers: { authorization: `Bearer ${key}` } },
  )

it.each([
  // @note Looked up at the call: msw patches the global fetch in listen().
  ['fetch, through msw', (...args: Parameters<typeof fetch>) => fetch(...args)],
  ['sandbox.fetch', sandbox.fetch],
])('answers in happy-dom, with bodies that read: %s', async (_, send) => {
  const created = await create(send as typeof fetch)
  expect(created.status).toBe(201)
  expect(((await created.json()) as { name: string }).name).toBe('Ada')

  const refused = await create(send as typeof fetch, 'sk_test_nobody')
  expect(refused.status).toBe(401)
  expect(((await refused.json()) as { code: string }).code).toBe(
    'invalid_credentials',
  )

  const state = await send(`${location.origin}/__sandbox/state`)
  expect(state.status).toBe(200)
  expect(
    ((await state.json()) as { customers: { name: string }[] }).customers.some(
      (customer) => customer.name === 'Ada',
    ),
  ).toBe(true)
})
