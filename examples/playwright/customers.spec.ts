import { expect, test } from 'customer-token-sandbox/playwright'

test('a 503 queued for this test hits only this test', async ({
  sandbox,
  request,
}) => {
  await sandbox.scenarios.next('createCustomer', { status: 503 }) // this account's next call only
  const create = () =>
    request.post(`${sandbox.url}/v1/customers`, {
      headers: sandbox.headers, // Authorization: Bearer <this test's own key>
      data: { name: 'Ada', email: 'ada@example.com' },
    })
  expect((await create()).status()).toBe(503)
  expect((await create()).status()).toBe(201)
  expect((await sandbox.journal.list()).map((entry) => entry.status)).toEqual([
    201, 503,
  ])
})

test("a token expires on this test's clock only", async ({
  sandbox,
  request,
}) => {
  const minted = await request.post(`${sandbox.url}/v2/tokens`, {
    headers: sandbox.headers,
    data: { scopes: ['customers:write'], expires_in: 60 },
  })
  const { token } = await minted.json()
  await sandbox.clock.advance(60 * 1000) // by 60 s (a whole number of seconds); other tests' clocks do not move
  const create = await request.post(`${sandbox.url}/v1/customers`, {
    headers: { authorization: `Bearer ${token}` },
    data: { name: 'Ada', email: 'ada@example.com' },
  })
  expect(create.status()).toBe(401) // token_expired
})
