import type { Browser, BrowserContext, Page } from 'playwright-core'
import type { ViteDevServer } from 'vite'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { fetchIn, launchChromium, postIn, startTestPage } from '../_browser.ts'

// With `persist` on, two tabs of one app each kept their own data and saved
// it whole: a customer created (201) in one tab was overwritten by the other
// tab's next save and was gone after a reload. A tab taking in another's
// save keeps its own journal and queued scenarios, which are not saved.

let server: ViteDevServer
let url: string
let browser: Browser
let context: BrowserContext
beforeAll(async () => {
  ;({ server, url } = await startTestPage())
  browser = await launchChromium()
  // One context: the tabs share the origin's localStorage and worker.
  context = await browser.newContext()
})
afterAll(async () => {
  await browser?.close()
  await server?.close()
})

const errors: string[] = []
async function tab(): Promise<Page> {
  const page = await context.newPage()
  page.on('pageerror', (error) => errors.push(error.message))
  await page.goto(`${url}?persist`)
  await page.locator('#status', { hasText: /ready|restored/ }).waitFor()
  return page
}

const names = async (page: Page): Promise<string[]> =>
  (await fetchIn(page, '/__sandbox/state')).body.customers.map(
    (customer: { name: string }) => customer.name,
  )

it('keeps the customers each tab created, in every tab and after a reload', async () => {
  const first = await tab()
  const second = await tab()
  const created = (page: Page, name: string) =>
    postIn(
      page,
      '/v1/customers',
      { name, email: 'tab@example.com' },
      DEMO_KEY_ONE,
    )

  // The second tab's own journal and queued scenario, which are not saved.
  expect((await postIn(second, '/v1/customers', {}, null)).status).toBe(401)
  await second.evaluate(() =>
    window.sandbox.scenarios.next('createCustomer', { status: 503 }),
  )

  expect((await created(first, 'Created in the first tab')).status).toBe(201)
  // The second tab takes what the first saved before it writes its own.
  await expect
    .poll(() => names(second), { timeout: 5000 })
    .toContain('Created in the first tab')
  expect((await created(second, 'Not created: 503')).status).toBe(503)
  expect((await created(second, 'Created in the second tab')).status).toBe(201)
  const journal = await fetchIn(second, '/__sandbox/requests')
  expect(
    journal.body.requests.map((entry: { status: number }) => entry.status),
  ).toEqual([201, 503, 401])
  await expect
    .poll(() => names(first), { timeout: 5000 })
    .toContain('Created in the second tab')

  const third = await tab()
  expect(await third.locator('#status').textContent()).toBe('restored')
  expect(await names(third)).toEqual(
    expect.arrayContaining([
      'Created in the first tab',
      'Created in the second tab',
    ]),
  )
  expect(errors).toEqual([])
})
