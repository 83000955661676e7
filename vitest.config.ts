import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/**/*.browser.test.ts'],
    globalSetup: ['test/_global-setup.ts'],
    typecheck: { enabled: true, include: ['test/types/**/*.test-d.ts'] },
  },
})
