import { expect, it } from 'vitest'
import { usePlayground } from '../_playground.ts'

// At 320 px wide (a small phone), the mode switch's label, which names the
// server's URL on one line, made the page wider than the window: the whole
// page scrolled sideways.

const bench = usePlayground()

it('fits a 320 px wide window, the server URL in the mode switch included', async () => {
  const page = await bench.open()
  await page.setViewportSize({ width: 320, height: 640 })
  await expect
    .poll(() => page.locator('#mode-server-label').textContent())
    .toContain(bench.server.url)
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }))
  expect(scrollWidth).toBeLessThanOrEqual(clientWidth)
})
