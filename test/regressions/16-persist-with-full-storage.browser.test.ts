import type { Browser, ConsoleMessage, Page } from 'playwright-core'
import type { ViteDevServer } from 'vite'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { fetchIn, launchChromium, postIn, startTestPage } from '../_browser.ts'

// With `persist` on and the origin's localStorage full, a write through the
// API must still be answered and kept in memory, nothing may throw into the
// page, and the developer is told once on the console what happened and
// what to do.

let server: ViteDevServer
let url: string
let browser: Browser
beforeAll(async () => {
  ;({ server, url } = await startTestPage())
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await server?.close()
})

interface Seen {
  page: Page
  warnings: string[]
  infos: string[]
  errors: string[]
}
const opened: Page[] = []
afterEach(async () => {
  for (const page of opened.splice(0)) await page.context().close()
})

/** Opens the test page with `persist`, after filling the origin's localStorage. */
async function openWithFullStorage(): Promise<Seen> {
  const context = await browser.newContext()
  await context.addInitScript(() =>
    addEventListener('unhandledrejection', (event) =>
      console.error(`unhandled rejection: ${String(event.reason)}`),
    ),
  )
  const page = await context.newPage()
  opened.push(page)
  const seen: Seen = { page, warnings: [], infos: [], errors: [] }
  page.on('pageerror', (error) => seen.errors.push(error.message))
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() === 'warning') seen.warnings.push(message.text())
    if (message.type() === 'info') seen.infos.push(message.text())
    if (message.type() === 'error') seen.errors.push(message.text())
  })
  // The app's own data fills the origin's storage before the sandbox saves.
  await page.goto(`${url}?fill`)
  await page.locator('#status', { hasText: 'ready' }).waitFor()
  await page.evaluate(() => {
    const chunk = 'x'.repeat(256 * 1024)
    for (let i = 0; ; i++) {
      try {
        localStorage.setItem(`app-data-${i}`, chunk)
      } catch {
        break
      }
    }
    // Room for a few bytes, not for the sandbox's data.
    for (let i = 0; ; i++) {
      try {
        localStorage.setItem(`app-small-${i}`, 'x'.repeat(1024))
      } catch {
        break
      }
    }
  })
  await page.goto(`${url}?persist`)
  await page.locator('#status', { hasText: /ready|restored/ }).waitFor()
  return seen
}

const createCustomer = (page: Page, name: string) =>
  postIn(
    page,
    '/v1/customers',
    { name, email: 'full@example.com' },
    DEMO_KEY_ONE,
  )

it('answers writes from memory, throws nothing and warns once with what to do', async () => {
  const { page, warnings, errors } = await openWithFullStorage()

  const first = await createCustomer(page, 'Stored in memory')
  expect(first.status).toBe(201)
  expect(first.body).toMatchObject({ name: 'Stored in memory' })
  const second = await createCustomer(page, 'Also in memory')
  expect(second.status).toBe(201)
  const token = await postIn(
    page,
    '/v2/tokens',
    { scopes: ['customers:read'] },
    DEMO_KEY_ONE,
  )
  expect(token.status).toBe(201)

  const state = await fetchIn(page, '/__sandbox/state')
  expect(
    state.body.customers.map((customer: { name: string }) => customer.name),
  ).toEqual(expect.arrayContaining(['Stored in memory', 'Also in memory']))
  await page.evaluate(() => window.sandbox.save())

  const told = warnings.filter((text) => text.includes('localStorage'))
  expect(told).toHaveLength(1)
  expect(told[0]).toMatch(/full/)
  // What happened to the data, and what to do about it.
  expect(told[0]).toMatch(/answering from memory/)
  expect(told[0]).toMatch(/lost on reload/)
  expect(told[0]).toMatch(/localStorage\.clear\(\)/)
  expect(told[0]).toMatch(/customersPerAccount/)
  expect(errors).toEqual([])
})

it('saves again once the storage has room, and the data is restored after a reload', async () => {
  const { page, warnings, infos, errors } = await openWithFullStorage()
  expect((await createCustomer(page, 'Before the room')).status).toBe(201)
  expect(warnings.filter((text) => text.includes('localStorage'))).toHaveLength(
    1,
  )

  // The app frees its own data; the next change is saved.
  await page.evaluate(() => {
    for (const key of Object.keys(localStorage))
      if (key.startsWith('app-')) localStorage.removeItem(key)
  })
  expect((await createCustomer(page, 'After the room')).status).toBe(201)
  expect(infos.filter((text) => text.includes('localStorage'))).toEqual([
    expect.stringMatching(/again/),
  ])

  await page.reload()
  await page.locator('#status', { hasText: 'restored' }).waitFor()
  const state = await fetchIn(page, '/__sandbox/state')
  expect(
    state.body.customers.map((customer: { name: string }) => customer.name),
  ).toEqual(expect.arrayContaining(['Before the room', 'After the room']))
  expect(errors).toEqual([])
})
