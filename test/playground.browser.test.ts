import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { DEMO_KEY_ONE, PERSONA_READ_ONLY_KEY } from '../fixtures/demo-keys.ts'
import { createSandboxServer, type SandboxServer } from '../src/node.ts'
import { screenshot, useBrowser } from './_browser.ts'

// The built playground (dist/playground), served by the standalone server
// as `npm start` serves it; everything it shows comes from the worker.
let server: SandboxServer
beforeAll(async () => {
  server = await createSandboxServer({ port: 0 })
})
afterAll(() => server?.close())

const browser = useBrowser()

async function open(): Promise<Page> {
  const page = await browser.page()
  await page.goto(server.playgroundUrl!)
  await page.locator('body[data-ready="true"]').waitFor()
  return page
}

/** Clicks a send button and waits until the response panel shows `status`. */
const sendAndSee = async (page: Page, button: string, status: string) => {
  await page.getByRole('button', { name: button }).click()
  await expect
    .poll(() => page.locator('#response-status').textContent())
    .toBe(status)
}

it('is served at / by the standalone server and names what runs it', async () => {
  expect(server.playgroundUrl).toBe(`${server.url}/`)
  const page = await open()
  await expect
    .poll(() => page.locator('#status').textContent())
    .toContain("Running in this page through MSW's service worker")
  expect(await page.title()).toContain('playground')
  // The documented keys are there, demo key one preselected.
  expect(await page.locator('#customer-credential').inputValue()).toBe(
    DEMO_KEY_ONE,
  )
  const labels = await page
    .locator('#token-credential option')
    .allTextContents()
  expect(labels.join('\n')).toContain(PERSONA_READ_ONLY_KEY)
  expect(labels.join('\n')).toContain('Revoked key')
})

it('clicks through both operations, the clock, scenarios and the assumptions', async () => {
  const page = await open()
  const customers = page.locator('#customers tbody tr')
  const journal = page.locator('#journal tbody tr')

  // Create a customer with the preselected key: request and response shown.
  await sendAndSee(page, 'Send POST /v1/customers', '201 Created')
  const response = await page.locator('#response').textContent()
  expect(response).toContain('HTTP 201 Created')
  expect(response).toMatch(/x-request-id: req_/)
  expect(response).toContain('"name": "Ada Lovelace"')
  expect(await page.locator('#request').textContent()).toContain(
    `authorization: Bearer ${DEMO_KEY_ONE}`,
  )
  expect(await customers.first().textContent()).toContain('Ada Lovelace')
  expect(await journal.first().textContent()).toContain(
    'POST /v1/customers201 Created',
  )

  // A token from the read-only persona: customers:read only, so a 403.
  await page.locator('#token-credential').selectOption(PERSONA_READ_ONLY_KEY)
  await page.getByLabel('customers:write').uncheck()
  await page.getByLabel('customers:read').check()
  await sendAndSee(page, 'Send POST /v2/tokens', '201 Created')
  expect(await page.locator('#tokens tbody tr').count()).toBe(1)
  // The new token is selected in "Create a customer".
  await expect
    .poll(() =>
      page.locator('#customer-credential option:checked').textContent(),
    )
    .toMatch(/^Token tkn_\w+ \(customers:read\)/)
  await sendAndSee(page, 'Send POST /v1/customers', '403 Forbidden')
  expect(await page.locator('#response').textContent()).toContain(
    '"code": "insufficient_scope"',
  )

  // A writing token from demo key one, then an hour on the clock: expired.
  await page.locator('#token-credential').selectOption(DEMO_KEY_ONE)
  await page.getByLabel('customers:read').uncheck()
  await page.getByLabel('customers:write').check()
  await sendAndSee(page, 'Send POST /v2/tokens', '201 Created')
  await expect
    .poll(() =>
      page.locator('#customer-credential option:checked').textContent(),
    )
    .toMatch(/^Token tkn_\w+ \(customers:write\)/)
  const newest = page.locator('#tokens tbody tr').first()
  expect(await newest.textContent()).toContain('valid')
  await sendAndSee(page, 'Send POST /v1/customers', '201 Created')
  const before = await page.locator('#clock-now').getAttribute('datetime')
  await page.getByRole('button', { name: '+1 hour' }).click()
  await expect.poll(() => newest.textContent()).toContain('expired')
  const after = await page.locator('#clock-now').getAttribute('datetime')
  expect(Date.parse(after!) - Date.parse(before!)).toBeGreaterThanOrEqual(
    3_600_000,
  )
  await sendAndSee(page, 'Send POST /v1/customers', '401 Unauthorized')
  expect(await page.locator('#response').textContent()).toContain(
    '"code": "token_expired"',
  )

  // Scenarios: the next call fails with 503, then one with a network error.
  await page.locator('#customer-credential').selectOption(DEMO_KEY_ONE)
  await page.getByRole('button', { name: 'Fail with 503' }).click()
  await expect
    .poll(() => page.locator('#scenarios').textContent())
    .toContain('Next call of either operation: fail with 503')
  await sendAndSee(page, 'Send POST /v1/customers', '503 Service Unavailable')
  expect(await page.locator('#scenarios').textContent()).toContain(
    'None queued',
  )
  await page.getByRole('button', { name: 'Network error' }).click()
  await sendAndSee(page, 'Send POST /v1/customers', 'network error')
  await sendAndSee(page, 'Send POST /v1/customers', '201 Created')

  // The journal holds every call, newest first; the assumptions are listed.
  const statuses = await page
    .locator('#journal tbody tr td:nth-child(3)')
    .allTextContents()
  expect(statuses.slice(0, 3)).toEqual([
    '201 Created',
    'network error',
    '503 Service Unavailable',
  ])
  const assumptions = page.locator('#assumptions tbody tr')
  expect(await assumptions.count()).toBeGreaterThan(10)
  expect(await page.locator('#assumptions').textContent()).toContain(
    'requiredFields',
  )

  await screenshot(page, 'playground')

  // Reset: back to the seed, the new customers gone.
  await page.getByRole('button', { name: 'Reset to the seed' }).click()
  await expect
    .poll(() => page.locator('#customers-count').textContent())
    .toContain('50 customers in all')
  expect(await page.locator('#tokens tbody').textContent()).toContain(
    'No tokens yet',
  )
})

it('keeps its data across a reload once asked to', async () => {
  const page = await open()
  // The page reloads to start the worker with persistence on.
  await Promise.all([
    page.waitForEvent('framenavigated'),
    page.getByLabel('Keep the data across reloads').click(),
  ])
  await page.locator('body[data-ready="true"]').waitFor()
  expect(
    await page.getByLabel('Keep the data across reloads').isChecked(),
  ).toBe(true)
  await expect
    .poll(() => page.locator('#status').textContent())
    .toContain('kept in localStorage')
  await page.getByLabel('name').fill('Grace Hopper')
  await page.getByLabel('email').fill('grace@example.com')
  await sendAndSee(page, 'Send POST /v1/customers', '201 Created')

  await page.reload()
  await page.locator('body[data-ready="true"]').waitFor()
  expect(await page.locator('#status').textContent()).toContain(
    'restored from localStorage',
  )
  expect(
    await page.locator('#customers tbody tr').first().textContent(),
  ).toContain('Grace Hopper')
})

it('updates the journal and the accounts live when other code in the page calls the API', async () => {
  const page = await open()
  await page.evaluate(async (key) => {
    await fetch('/v1/customers', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name: 'Alan Turing', email: 'alan@example.com' }),
    })
  }, DEMO_KEY_ONE)
  await expect
    .poll(() => page.locator('#journal tbody tr').first().textContent())
    .toContain('POST /v1/customers201 Created')
  expect(
    await page.locator('#customers tbody tr').first().textContent(),
  ).toContain('Alan Turing')
  expect(
    await page
      .locator('#accounts tbody tr', { hasText: 'Demo Account One' })
      .textContent(),
  ).toContain('26')
})
