// Before the suite: the package built once, and the shared Redis of a run on the Redis store.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from '@redis/client'
import { build } from 'tsdown'
import type { TestProject } from 'vitest/node'
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
): Promise<(() => void) | undefined> {
  const store = project.config.env.SANDBOX_TEST_STORE
  // @note The package is built once, by the project of the memory store:
  // the others run the same files again and need no second build.
  if (store === undefined) await build({ logLevel: 'error' })
  if (store !== 'redis') return undefined
  const binary = await findRedisServer({ install: false })
  const dir = mkdtempSync(join(tmpdir(), 'cts-suite-redis-'))
  const port = await freePort()
  const redis = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
    { stdio: 'ignore' },
  )
  const url = `redis://127.0.0.1:${port}/0`
  await waitForPing(url)
  project.provide('sharedRedisUrl', url)
  return () => {
    redis.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A port that was free a moment ago on 127.0.0.1 (Redis takes no port 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().on('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() =>
        resolve(typeof address === 'object' && address ? address.port : 0),
      )
    })
  })
}

/** Waits up to 10 s for the Redis at `url` to answer PING. */
async function waitForPing(url: string): Promise<void> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const client = createClient({ url }).on('error', () => {})
    try {
      await client.connect()
      await client.ping()
      return
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(
          `The suite's Redis at ${url} did not answer PING within 10 s.`,
          {
            cause: error,
          },
        )
      await new Promise((done) => setTimeout(done, 50))
    } finally {
      client.destroy()
    }
  }
}
