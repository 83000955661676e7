import { defineConfig } from 'vitest/config'

// Real-browser tests: Node drives Chromium through playwright-core.
export default defineConfig({
  test: {
    include: ['test/**/*.browser.test.ts'],
    globalSetup: ['test/_browser-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
})
