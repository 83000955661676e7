import { expect, it } from 'vitest'
import {
  DEMO_KEY_ONE,
  PERSONA_EXPIRED_TOKENS_KEY,
  PERSONA_RATE_LIMITED_KEY,
  PERSONA_READ_ONLY_KEY,
  PERSONA_SLOW_KEY,
  PERSONA_UNAVAILABLE_KEY,
  REVOKED_KEY,
} from '../../fixtures/demo-keys.ts'
import {
  eventually,
  journalRows,
  sendAndSee,
  usePlayground,
} from '../_playground.ts'

// Issue 17: in a demo, the five persona keys all read `sk_test_…0001`, the
// account column wrapped onto three lines, a token minted in one form
// silently became the other form's credential, and a queued 503 that a 401
// did not use was left unexplained.
const bench = usePlayground()

it('tells the five persona keys apart in the accounts and the journal', async () => {
  const page = await bench.open()
  const personas = page.locator('#accounts tbody tr', {
    hasText: 'Persona Account',
  })
  const keys = await personas.locator('li').allTextContents()
  expect(keys).toEqual([
    `${PERSONA_RATE_LIMITED_KEY} persona rate-limited`,
    `${PERSONA_SLOW_KEY} persona slow`,
    `${PERSONA_UNAVAILABLE_KEY} persona unavailable`,
    `${PERSONA_EXPIRED_TOKENS_KEY} persona expired-tokens`,
    `${PERSONA_READ_ONLY_KEY} persona read-only`,
  ])
  expect(
    await page
      .locator('#accounts tbody tr', { hasText: 'Demo Account One' })
      .locator('li')
      .allTextContents(),
  ).toEqual([DEMO_KEY_ONE, `${REVOKED_KEY} revoked key`])
  // Account names never wrap: one line box each, in both tables.
  const lines = (selector: string) =>
    page.evaluate(
      (css) =>
        [...document.querySelectorAll(css)].map(
          (node) => node.getClientRects().length,
        ),
      selector,
    )
  expect(await lines('#accounts tbody .nowrap')).toEqual([1, 1, 1])
  expect(await lines('#customers tbody .nowrap')).toEqual(Array(10).fill(1))

  // From the page, the journal names the key it sent.
  await page.locator('#customer-credential').selectOption(PERSONA_READ_ONLY_KEY)
  await sendAndSee(page, 'Send POST /v1/customers', '403 Forbidden')
  await eventually(() =>
    journalRows(page).first().locator('td').nth(5).textContent(),
  ).toBe('sk_test_…0001 (persona read-only)')
  // From curl, the masked form fits four of them, and the page says so.
  expect(
    (await bench.curlCustomer('Persona', PERSONA_RATE_LIMITED_KEY)).status,
  ).toBe(201)
  await eventually(() =>
    journalRows(page).first().locator('td').nth(5).textContent(),
  ).toBe('sk_test_…0001 (one of 4 Persona Account keys)')
})

it('offers a minted token to "Create a customer" instead of switching it there', async () => {
  const page = await bench.open()
  const customerKey = page.locator('#customer-credential')
  await page.locator('#token-credential').selectOption(PERSONA_READ_ONLY_KEY)
  await page.getByLabel('customers:write').uncheck()
  await page.getByLabel('customers:read').check()
  await sendAndSee(page, 'Send POST /v2/tokens', '201 Created')
  const minted = await page.locator('#minted-text').textContent()
  expect(minted).toMatch(
    /^Minted tkn_\w+ \(customers:read\)\. It is now in both credential lists; "Create a customer" still sends what it showed before\.$/,
  )
  // Both forms keep what was chosen in them, and say what they send.
  expect(await customerKey.inputValue()).toBe(DEMO_KEY_ONE)
  expect(await page.locator('#token-credential').inputValue()).toBe(
    PERSONA_READ_ONLY_KEY,
  )
  expect(await page.locator('#customer-credential-shown').textContent()).toBe(
    `Sends Authorization: Bearer ${DEMO_KEY_ONE} (Demo Account One)`,
  )
  await sendAndSee(page, 'Send POST /v1/customers', '201 Created')

  // Chosen on purpose, the token is what the form sends, and says so.
  await page
    .getByRole('button', { name: 'Use it in "Create a customer"' })
    .click()
  expect(
    await page.locator('#customer-credential option:checked').textContent(),
  ).toMatch(/^Token tkn_\w+ \(customers:read\)$/)
  expect(
    await page.locator('#customer-credential-shown').textContent(),
  ).toMatch(
    /^Sends Authorization: Bearer tok_test_…\w{4} \(Token tkn_\w+ \(customers:read\)\)$/,
  )
  await sendAndSee(page, 'Send POST /v1/customers', '403 Forbidden')
  expect(await page.locator('#request').textContent()).not.toContain(
    DEMO_KEY_ONE,
  )
  expect(
    await journalRows(page).first().locator('td').nth(5).textContent(),
  ).toMatch(/^tok_test_…\w{4} \(token tkn_\w+\)$/)
})

it('explains a queued 503 that a 401 left in the queue', async () => {
  const page = await bench.open()
  await page.getByRole('button', { name: 'Fail with 503' }).click()
  await eventually(() => page.locator('#scenarios').textContent()).toBe(
    'Next call of either operation: fail with 503',
  )
  await page.locator('#customer-credential').selectOption(REVOKED_KEY)
  await sendAndSee(page, 'Send POST /v1/customers', '401 Unauthorized')
  expect(await page.locator('#response-note').textContent()).toContain(
    'The queued scenario did not apply: this call was refused at authentication',
  )
  expect(await page.locator('#scenario-why').textContent()).toBe(
    'Still queued: the last call (POST /v1/customers, 401 Unauthorized invalid_credentials) was refused at authentication, which comes before scenarios, so it did not use the queued 503. The next call with a valid credential will.',
  )
  expect(await page.locator('#scenarios').textContent()).toBe(
    'Next call of either operation: fail with 503',
  )

  await page.locator('#customer-credential').selectOption(DEMO_KEY_ONE)
  await sendAndSee(page, 'Send POST /v1/customers', '503 Service Unavailable')
  expect(await page.locator('#scenario-why').isHidden()).toBe(true)
  expect(await page.locator('#response-note').isHidden()).toBe(true)
  expect(await page.locator('#scenarios').textContent()).toBe(
    'None queued: calls answer normally.',
  )
})
