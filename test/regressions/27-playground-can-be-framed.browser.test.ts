import { createServer, type Server } from 'node:http'
import { once } from 'node:events'
import { afterEach, expect, it } from 'vitest'
import {
  createSandboxServer,
  type SandboxServer,
} from '../../src/runtimes/node.ts'
import { useBrowser } from '../_browser.ts'

// The playground could be framed by a page on another origin, which could
// then trick a click on "Reset to the seed" or the clock (clickjacking).
// Chromium now refuses to show it in the frame.

const browser = useBrowser()
let sandbox: SandboxServer | undefined
let site: Server | undefined
afterEach(async () => {
  await sandbox?.close()
  site?.close()
})

it('shows nothing of the playground in a frame of a page on another origin', async () => {
  sandbox = await createSandboxServer({ port: 0, seed: 1 })
  const framed = sandbox.playgroundUrl!
  site = createServer((_, res) =>
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(`<!doctype html><iframe src="${framed}"></iframe>`),
  ).listen(0, '127.0.0.1')
  await once(site, 'listening')
  const { port } = site.address() as { port: number }

  const page = await browser.page()
  // @note goto waits for the frame's load: the playground's, or the error
  // page Chromium shows in its place.
  await page.goto(`http://127.0.0.1:${port}/`)
  const frame = page.frames().find((f) => f !== page.mainFrame())!
  // A refused frame holds Chromium's error page, never the playground.
  expect(frame.url()).not.toBe(framed)
  expect(
    await page.locator('iframe').contentFrame().locator('button').count(),
  ).toBe(0)
})
