import { readdirSync, readFileSync } from 'node:fs'
import { defineConfig } from 'vitest/config'

// Every test file that starts a server with `startServer` or spawns the CLI
// runs again on the file store and on the Redis store (see `storeUnderTest`
// in test/_servers.ts and `storeFlagsUnderTest` in test/_spawn.ts), with its
// assertions unchanged.
const serverTests = readdirSync('test', { recursive: true, encoding: 'utf8' })
  .filter((name) => name.endsWith('.test.ts') && !name.includes('browser'))
  .filter((name) =>
    /\b(?:startServer|startCli|runCli|spawnCli)\(/.test(
      readFileSync(`test/${name}`, 'utf8'),
    ),
  )
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
