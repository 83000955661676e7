// Before the suite: the package built once, and the shared Redis of a run on the Redis store.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from 'tsdown'
import type { TestProject } from 'vitest/node'
import { startRedisServer } from '../examples/shared-sandbox/redis.mjs'
import { findRedisServer } from '../scripts/find-redis.mjs'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The Redis every server of a `SANDBOX_TEST_STORE=redis` run keeps its state in. */
    sharedRedisUrl: string
  }
}

/**
 * Builds the package once before the suite, so the CLI tests spawn the
 * `bin` that consumers run rather than a stale one; on a run of the suite
 * on the Redis store, also starts the one Redis its servers share (each
 * under a namespace of its own).
 */
export default async function setup(
  project: TestProject,
): Promise<(() => Promise<void>) | undefined> {
  const store = project.config.env?.SANDBOX_TEST_STORE
  // @note The package is built once, by the project of the memory store:
  // the others run the same files again and need no second build.
  if (store === undefined) await build({ logLevel: 'error' })
  if (store !== 'redis') return undefined
  const dir = mkdtempSync(join(tmpdir(), 'cts-suite-redis-'))
  const redis = await startRedisServer({
    binary: await findRedisServer({ install: false }),
    dir,
  })
  project.provide('sharedRedisUrl', redis.url)
  return async () => {
    await redis.stop('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
}
