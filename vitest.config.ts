import { defineConfig } from 'vitest/config'

export default defineConfig(({ mode }) => ({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/**/*.browser.test.ts'],
    globalSetup: ['test/_global-setup.ts'],
    typecheck: { enabled: true, include: ['test/types/**/*.test-d.ts'] },
    // `npm run fuzz` (`--mode fuzz`): the property tests at scale, on any shell.
    env: mode === 'fuzz' ? { FUZZ_RUNS: process.env.FUZZ_RUNS ?? '12500' } : {},
  },
}))
