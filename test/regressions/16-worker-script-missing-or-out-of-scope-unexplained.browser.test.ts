import { readFile } from 'node:fs/promises'
import type { Plugin, ViteDevServer } from 'vite'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { resolveWorkerSource, sandbox } from '../../src/runtimes/vite.ts'
import { postIn, startDevServer, useBrowser } from '../_browser.ts'

// `startSandboxWorker()` without the worker script (no `npx msw init`) got
// msw's "unsupported MIME type ('text/html')" from a dev server that answers
// a missing file with the page, with no word of what to do; with the script
// in a folder whose scope leaves the page out, it started silently (msw's
// warning is muted when quiet) and every request went to the network.

// The worker script, also served from a folder below the page.
const subfolder: Plugin = {
  name: 'worker-in-a-subfolder',
  async configureServer(server) {
    const script = await readFile(resolveWorkerSource(process.cwd()).path)
    server.middlewares.use((request, response, next) => {
      if (request.url !== '/sub/mockServiceWorker.js') return next()
      response.writeHead(200, { 'content-type': 'text/javascript' })
      response.end(script)
    })
  },
}

let server: ViteDevServer
let url: string
beforeAll(async () => {
  ;({ server, url } = await startDevServer({
    configFile: false,
    root: new URL('../browser-page/', import.meta.url).pathname,
    plugins: [sandbox({ start: false }), subfolder],
  }))
})
afterAll(() => server?.close())

const browser = useBrowser()

async function start(worker: string): Promise<string> {
  const page = await browser.page()
  await page.goto(`${url}?worker=${encodeURIComponent(worker)}`)
  const status = page.locator('#status', { hasText: /ready|failed/ })
  await status.waitFor()
  return (await status.textContent())!
}

it('says to run npx msw init (or use the Vite plugin) when the worker script is missing', async () => {
  const status = await start('/missing/mockServiceWorker.js')
  expect(status).toContain(
    `The service worker did not start from ${url}missing/mockServiceWorker.js`,
  )
  expect(status).toContain('MIME type')
  expect(status).toContain('npx msw init')
  expect(status).toContain('customer-token-sandbox/vite')
})

it('refuses to start, saying what to do, when the page is outside the worker scope', async () => {
  const status = await start('/sub/mockServiceWorker.js')
  expect(status).toContain(`controls ${url}sub/ only`)
  expect(status).toContain('Service-Worker-Allowed')
})

it('still starts and answers with the script where it belongs', async () => {
  const page = await browser.page()
  await page.goto(url)
  await page.locator('#status', { hasText: 'ready' }).waitFor()
  const created = await postIn(
    page,
    '/v1/customers',
    { name: 'Ada', email: 'ada@example.com' },
    DEMO_KEY_ONE,
  )
  expect(created.status).toBe(201)
})
