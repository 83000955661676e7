import { expect, it } from 'vitest'
import { startDevServer, useBrowser } from './_browser.ts'

// examples/vite-app as a consumer runs it: `vite` with its own config, whose
// one line `sandbox()` serves the worker and starts the sandbox in the page.
const example = new URL('../examples/vite-app/', import.meta.url).pathname
const browser = useBrowser()

it.each(['/', '/app/'])(
  'answers the example app in dev at the base URL %s with no code of its own',
  async (base) => {
    const { url, server } = await startDevServer({
      root: example,
      configFile: `${example}vite.config.ts`,
      base,
    })
    try {
      const page = await browser.page()
      await page.goto(url)
      await page.getByRole('button', { name: 'Create customer' }).click()
      const result = page.locator('#result')
      await expect.poll(() => result.textContent()).toMatch(/^201 /)
      expect(JSON.parse((await result.textContent())!.slice(4))).toEqual({
        id: expect.stringMatching(/^cus_/),
        name: 'Ada Lovelace',
        email: 'ada@example.com',
      })
      expect(
        await page.evaluate(
          () => navigator.serviceWorker.controller?.scriptURL,
        ),
      ).toBe(`${new URL(url).origin}${base}mockServiceWorker.js`)
    } finally {
      await server.close()
    }
  },
)
