import { readdirSync, readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { defineConfig, type ViteUserConfig } from 'vitest/config'
import { RUNS_ONCE } from './test/_runs-once.ts'
import { findRedisServer } from './scripts/find-redis.mjs'

// Every test file that starts a server with `startServer` or spawns the CLI
// runs again on the file store and on the Redis store (see `storeUnderTest`
// in test/_servers.ts and `storeFlagsUnderTest` in test/_spawn.ts), with its
// assertions unchanged; but one whose servers each name their own store
// (RUNS_ONCE, checked as they start) runs once.
const testFiles = (keep: (text: string) => boolean): string[] =>
  readdirSync('test', { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.test.ts') && !name.includes('browser'))
    .filter((name) => keep(readFileSync(`test/${name}`, 'utf8')))
    .map((name) => `test/${name}`)
const serverTests = testFiles(
  (text) =>
    /\b(?:startServer|startCli|runCli|spawnCli)\(/.test(text) &&
    !text.includes(RUNS_ONCE),
)

export default defineConfig(async ({ mode }): Promise<ViteUserConfig> => {
  // @note Set here, in the main process, so that every Redis the run
  // starts is Valkey: the tests' own (through their workers' environment)
  // and any that the global set-up starts.
  if (mode === 'valkey')
    process.env.REDIS_SERVER = await findRedisServer({ valkey: true })
  return {
    test: {
      globalSetup: ['test/_global-setup.ts'],
      // @note One worker more than the cores, not Vitest's one fewer: most
      // files wait on processes they start (the CLI, Redis, Chromium), and
      // on 2 cores Vitest's default ran one file at a time with a core idle
      // (the regression files: 404 s with one worker, 238 s with three).
      maxWorkers: availableParallelism() + 1,
      // `npm run fuzz` (`--mode fuzz`): the property tests at scale, on any shell.
      env:
        mode === 'fuzz' ? { FUZZ_RUNS: process.env.FUZZ_RUNS ?? '12500' } : {},
      // `npm run test:valkey` (`--mode valkey`): the tests that start Redis
      // servers of their own (the store's contract, the fleet, its faults, a
      // cluster) on Valkey, the fork of the server the store also claims.
      projects:
        mode === 'valkey'
          ? [
              {
                extends: true as const,
                test: {
                  name: 'valkey',
                  include: testFiles(
                    (text) =>
                      /from '\.\.?\/_redis\.ts'/.test(text) ||
                      /\bemptyFleets?\(/.test(text),
                  ),
                },
              },
            ]
          : [
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
              ...(mode === 'fuzz' ? [] : (['file', 'redis'] as const)).map(
                (store) => ({
                  extends: true as const,
                  test: {
                    name: store,
                    include: serverTests,
                    env: { SANDBOX_TEST_STORE: store },
                  },
                }),
              ),
            ],
    },
  }
})
