import type { ViteDevServer } from 'vite'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { fetchIn, postIn, startTestPage, useBrowser } from '../_browser.ts'

// `startSandboxWorker()` called a second time while the first was starting
// (React's StrictMode runs an effect twice) made msw 2 answer every request
// twice: one POST /v1/customers stored two customers. Called again once the
// first had started (HMR running a module again), msw 2 moved the requests
// to the second sandbox without a word and msw 3 threw "Failed to replace a
// global value at "WebSocket": already replaced."

let server: ViteDevServer
let url: string
beforeAll(async () => {
  ;({ server, url } = await startTestPage())
})
afterAll(() => server?.close())

const browser = useBrowser()

it.each(['together', 'after'])(
  'stores one customer per request when started twice, the second start %s the first',
  async (when) => {
    const page = await browser.page()
    await page.goto(`${url}?twice=${when === 'together' ? 'together' : ''}`)
    await page.locator('#status', { hasText: /ready|failed/ }).waitFor()
    expect(await page.locator('#status').textContent()).toBe('ready')

    const statuses = []
    for (const name of ['One', 'Two', 'Three']) {
      const created = await postIn(
        page,
        '/v1/customers',
        { name, email: 'twice@example.com' },
        DEMO_KEY_ONE,
      )
      statuses.push(created.status)
    }
    expect(statuses).toEqual([201, 201, 201])
    const state = await fetchIn(page, '/__sandbox/state')
    const names = state.body.customers
      .map((customer: { name: string }) => customer.name)
      .filter((name: string) => ['One', 'Two', 'Three'].includes(name))
    expect(names.toSorted()).toEqual(['One', 'Three', 'Two'])
    // The newest start answers; the first was stopped for it.
    expect(
      await page.evaluate(() => [
        window.sandbox.customers
          .list()
          .filter((c) => c.email === 'twice@example.com').length,
        window
          .first!.customers.list()
          .filter((c) => c.email === 'twice@example.com').length,
      ]),
    ).toEqual([3, 0])
    // Stopping the first again changes nothing for the second.
    await page.evaluate(() => window.first!.stop())
    const after = await postIn(
      page,
      '/v1/customers',
      { name: 'Four', email: 'twice@example.com' },
      DEMO_KEY_ONE,
    )
    expect(after.status).toBe(201)
  },
)
