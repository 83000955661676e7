import { readdirSync, readFileSync } from 'node:fs'
import { defineConfig } from 'vitest/config'
import { RUNS_ONCE } from './test/_runs-once.ts'

// Every test file that starts a server with `startServer` or spawns the CLI
// runs again on the file store and on the Redis store (see `storeUnderTest`
// in test/_servers.ts and `storeFlagsUnderTest` in test/_spawn.ts), with its
// assertions unchanged; but one whose servers each name their own store
// (RUNS_ONCE, checked as they start) runs once.
const serverTests = readdirSync('test', { recursive: true, encoding: 'utf8' })
  .filter((name) => name.endsWith('.test.ts') && !name.includes('browser'))
  .filter((name) => {
    const text = readFileSync(`test/${name}`, 'utf8')
    return (
      /\b(?:startServer|startCli|runCli|spawnCli)\(/.test(text) &&
      !text.includes(RUNS_ONCE)
    )
  })
  .map((name) => `test/${name}`)

export default defineConfig(({ mode }) => ({
  test: {
    globalSetup: ['test/_global-setup.ts'],
    // `npm run fuzz` (`--mode fuzz`): the property tests at scale, on any shell.
    env: mode === 'fuzz' ? { FUZZ_RUNS: process.env.FUZZ_RUNS ?? '12500' } : {},
    projects: [
      {
        extends: true,
        test: {
          name: 'memory',
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.browser.test.ts'],
          typecheck: {
            enabled: true,
            include: ['test/types/**/*.test-d.ts'],
          },
        },
      },
      // @note Not in `--mode fuzz`, which runs two files at scale, once.
      ...(mode === 'fuzz' ? [] : (['file', 'redis'] as const)).map((store) => ({
        extends: true as const,
        test: {
          name: store,
          include: serverTests,
          env: { SANDBOX_TEST_STORE: store },
        },
      })),
    ],
  },
}))
