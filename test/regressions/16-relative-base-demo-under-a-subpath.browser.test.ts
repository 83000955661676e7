import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build, preview } from 'vite'
import { expect, it } from 'vitest'
import { useBrowser } from '../_browser.ts'

// A demo build (`sandbox({ demo: true })`) with a relative base (`base:
// './'`, for pages that can be served from any folder) started the worker
// from `/mockServiceWorker.js`, the root of the host: served under a path
// such as a project's GitHub Pages, the worker script was not there and the
// sandbox did not start.

const example = new URL('../../examples/vite-app/', import.meta.url).pathname
const browser = useBrowser()

it('starts the sandbox in a demo build with base ./ served under /sub/', async () => {
  const outDir = join(
    tmpdir(),
    `vite-relative-demo-${process.pid}-${Date.now()}`,
  )
  await build({
    root: example,
    configFile: `${example}vite.config.ts`,
    mode: 'demo',
    base: './',
    logLevel: 'error',
    build: { outDir, emptyOutDir: true },
  })
  const server = await preview({
    root: example,
    configFile: false,
    base: '/sub/',
    logLevel: 'error',
    build: { outDir },
    preview: { host: '127.0.0.1', port: 0 },
  })
  try {
    const origin = new URL(server.resolvedUrls!.local[0]!).origin
    const page = await browser.page()
    await page.goto(`${origin}/sub/`)
    await expect
      .poll(() => page.locator('#status').textContent())
      .toBe('Signed in with a customers:write token.')
    expect(
      await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL),
    ).toBe(`${origin}/sub/mockServiceWorker.js`)
    await page.getByRole('button', { name: 'Create customer' }).click()
    await expect
      .poll(() => page.locator('#result').textContent())
      .toMatch(/^201 /)
    // The document's generator is a chunk of its own, loaded on the first
    // ask: it must be found under the relative base too.
    const document = await page.evaluate(async () => {
      const response = await fetch('/openapi.json')
      return {
        status: response.status,
        paths: Object.keys((await response.json()).paths ?? {}),
      }
    })
    expect(document.status).toBe(200)
    expect(document.paths).toEqual(
      expect.arrayContaining(['/v1/customers', '/v2/tokens']),
    )
  } finally {
    await server.close()
  }
})
