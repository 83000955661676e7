import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build, preview } from 'vite'
import type { Page } from 'playwright-core'
import { expect, it } from 'vitest'
import { startDevServer, useBrowser } from './_browser.ts'

// examples/vite-app as a consumer runs it: `vite` with its own config, whose
// one line `sandbox()` serves the worker and starts the sandbox in the page.
// The app starts on DOMContentLoaded and mints a token at once.
const example = new URL('../examples/vite-app/', import.meta.url).pathname
const browser = useBrowser()

/** Drives the example app: its start-up token, then one customer. */
async function createCustomerIn(page: Page, url: string): Promise<void> {
  await page.goto(url)
  await expect
    .poll(() => page.locator('#status').textContent())
    .toBe('Signed in with a customers:write token.')
  await page.getByRole('button', { name: 'Create customer' }).click()
  const result = page.locator('#result')
  await expect.poll(() => result.textContent()).toMatch(/^201 /)
  expect(JSON.parse((await result.textContent())!.slice(4))).toEqual({
    id: expect.stringMatching(/^cus_/),
    name: 'Ada Lovelace',
    email: 'ada@example.com',
  })
}

it.each(['/', '/app/'])(
  'answers the example app in dev at the base URL %s, its DOMContentLoaded start-up call included',
  async (base) => {
    const { url, server } = await startDevServer({
      root: example,
      configFile: `${example}vite.config.ts`,
      base,
    })
    try {
      const page = await browser.page()
      await createCustomerIn(page, url)
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

it('answers the example app from a demo build (vite build --mode demo) served statically', async () => {
  const outDir = join(
    tmpdir(),
    `vite-demo-browser-${process.pid}-${Date.now()}`,
  )
  await build({
    root: example,
    configFile: `${example}vite.config.ts`,
    mode: 'demo',
    logLevel: 'error',
    build: { outDir, emptyOutDir: true },
  })
  const server = await preview({
    root: example,
    configFile: false,
    logLevel: 'error',
    build: { outDir },
    preview: { host: '127.0.0.1', port: 0 },
  })
  try {
    const url = server.resolvedUrls?.local[0]
    expect(url).toBeDefined()
    await createCustomerIn(await browser.page(), url!)
  } finally {
    await server.close()
  }
})
