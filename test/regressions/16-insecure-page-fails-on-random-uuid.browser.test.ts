import { chromium, type Browser } from 'playwright-core'
import type { ViteDevServer } from 'vite'
import { afterAll, beforeAll, expect, inject, it } from 'vitest'
import { CHROMIUM_ARGS } from '../../scripts/find-chromium.mjs'
import { createSandboxServer } from '../../src/runtimes/node.ts'
import { sandbox } from '../../src/runtimes/vite.ts'
import { startDevServer } from '../_browser.ts'

// Opened by a name other than localhost over plain http (`vite --host`, the
// app tried from a phone by the machine's address), the page is not a
// secure context: the sandbox failed with "crypto.randomUUID is not a
// function" from deep in @msw/data, saying nothing of why or what to do.
// The playground of a server that wants its admin token (one beyond
// loopback) sent such a page to its page mode, which cannot start there.

let server: ViteDevServer
let port: string
let browser: Browser
beforeAll(async () => {
  let url: string
  ;({ server, url } = await startDevServer({
    configFile: false,
    root: new URL('../browser-page/', import.meta.url).pathname,
    plugins: [sandbox({ start: false })],
    server: { allowedHosts: ['lan-address.test'] },
  }))
  port = new URL(url).port
  browser = await chromium.launch({
    executablePath: inject('chromiumPath'),
    // A name for this machine that is not loopback to the browser.
    args: [
      ...CHROMIUM_ARGS,
      '--host-resolver-rules=MAP lan-address.test 127.0.0.1',
    ],
  })
})
afterAll(async () => {
  await browser?.close()
  await server?.close()
})

it('says the page must be https or localhost, and how, when it is not a secure context', async () => {
  const page = await browser.newPage()
  await page.goto(`http://lan-address.test:${port}/`)
  const status = page.locator('#status', { hasText: /ready|failed/ })
  await status.waitFor()
  expect(await page.evaluate(() => isSecureContext)).toBe(false)
  const text = await status.textContent()
  expect(text).toContain(
    `The sandbox cannot run at http://lan-address.test:${port}: browsers give service workers only to secure pages`,
  )
  expect(text).toContain(
    'Open the app at http://localhost, or serve it over https',
  )
})

it("offers no page mode that cannot start on a guarded server's playground opened by address", async () => {
  const guarded = await createSandboxServer({
    port: 0,
    adminToken: 'a'.repeat(32),
    allowedHosts: ['lan-address.test'],
  })
  try {
    const page = await browser.newPage()
    await page.goto(`http://lan-address.test:${new URL(guarded.url).port}/`)
    const status = page.locator('#status', { hasText: 'does not let' })
    await status.waitFor()
    const text = await status.textContent()
    expect(text).toContain('The sandbox API needs the admin token')
    expect(text).toContain(
      'Nor can it run in this page, which is served over plain http from another machine: open it through localhost',
    )
    expect(await status.getByRole('link').count()).toBe(0)
  } finally {
    await guarded.close()
  }
})
