import type { Browser, BrowserContext, Page } from 'playwright-core'
import type { ViteDevServer } from 'vite'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { fetchIn, launchChromium, postIn, startTestPage } from '../_browser.ts'

// With `persist` on, two tabs that each created a customer before taking in
// the other's save each saved their data whole; each then took in the
// other's save in place of its own, and one of the two 201s was gone from
// both tabs and after a reload. And a request a tab was answering when the
// other tab's save came in failed as a network error ("Failed to fetch").

let server: ViteDevServer
let url: string
let browser: Browser
let context: BrowserContext
beforeAll(async () => {
  ;({ server, url } = await startTestPage())
  browser = await launchChromium()
  context = await browser.newContext()
})
afterAll(async () => {
  await browser?.close()
  await server?.close()
})

async function tab(): Promise<Page> {
  const page = await context.newPage()
  await page.goto(`${url}?persist`)
  await page.locator('#status', { hasText: /ready|restored/ }).waitFor()
  return page
}

const names = async (page: Page): Promise<string[]> =>
  (await fetchIn(page, '/__sandbox/state')).body.customers.map(
    (customer: { name: string }) => customer.name,
  )

it('keeps every customer and answers every request when two tabs create customers at the same time', async () => {
  const first = await tab()
  const second = await tab()
  const created = (page: Page, name: string) =>
    postIn(
      page,
      '/v1/customers',
      { name, email: 'tab@example.com' },
      DEMO_KEY_ONE,
    )
  const all: string[] = []
  for (let round = 0; round < 5; round++) {
    const pair = [`Round ${round} first tab`, `Round ${round} second tab`]
    const answers = await Promise.all([
      created(first, pair[0]!),
      created(second, pair[1]!),
    ])
    // Never a network error because the other tab saved meanwhile.
    expect(answers.map((answer) => answer.status)).toEqual([201, 201])
    all.push(...pair)
  }
  // Each tab takes the other's saves in and keeps its own customers.
  for (const page of [first, second]) {
    await expect
      .poll(() => names(page), { timeout: 5000 })
      .toEqual(expect.arrayContaining(all))
  }
  const third = await tab()
  expect(await names(third)).toEqual(expect.arrayContaining(all))

  // A reset is a whole new state: the other tabs take it as it is.
  const reset = await fetchIn(first, '/__sandbox/reset', { method: 'POST' })
  expect(reset.status).toBe(200)
  for (const page of [second, third]) {
    await expect
      .poll(
        async () => (await names(page)).filter((n) => n.startsWith('Round')),
        {
          timeout: 5000,
        },
      )
      .toEqual([])
  }
})
