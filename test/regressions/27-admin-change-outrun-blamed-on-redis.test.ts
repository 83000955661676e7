import { expect, it } from 'vitest'
import { createSandboxCore } from '../../src/sandbox-core.ts'
import { StoreConflict, type Store } from '../../src/model/store.ts'

// A change through /__sandbox/ that other replicas outran 50 times in a row
// answered "could not store this write in its Redis store (CONFLICT) …
// Retry once Redis takes writes again; GET /__sandbox/health shows the
// storage error", where Redis took every write and health showed nothing.
// It now says what happened, as an API call that was outran does.

it('says that other replicas wrote first, and changes nothing, when they outrun an admin change every time', async () => {
  const core = createSandboxCore({ seed: 1 })
  await core.sandbox.ready
  let attempts = 0
  const store: Store = {
    kind: 'busy',
    outage: {
      where: 'in its Redis store',
      until: 'Redis takes writes again',
      code: 'REDIS_UNAVAILABLE',
    },
    sync: () => Promise.resolve(undefined),
    resync: () => Promise.resolve(),
    version: () => 0,
    commit(_write, undo) {
      attempts++
      undo?.()
      return Promise.reject(new StoreConflict())
    },
    saveState: () => Promise.reject(new StoreConflict()),
    fault: () => undefined,
  }
  core.attach(store)
  const answer = await core.router.fetch(
    new Request('http://localhost/__sandbox/clock', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ now: '2030-01-01T00:00:00Z' }),
    }),
  )
  expect(answer.status).toBe(503)
  expect(answer.headers.get('retry-after')).toBe('1')
  const problem = (await answer.json()) as { code: string; detail: string }
  expect(problem.code).toBe('storage_unavailable')
  expect(problem.detail).toBe(
    'Other replicas wrote first 50 times in a row, so this write was not stored and nothing was changed. Retry it.',
  )
  expect(attempts).toBe(50)
  const clock = (await (
    await core.router.fetch(new Request('http://localhost/__sandbox/clock'))
  ).json()) as { now: string }
  expect(clock.now).not.toMatch(/^2030-/)
})
