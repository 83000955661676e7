import { expect, it } from 'vitest'
import { createSandboxCore } from '../../src/sandbox-core.ts'
import type { Store } from '../../src/model/store.ts'

// A /__sandbox/ change whose write Redis may have run before the connection
// closed (a reset cut off by CLIENT KILL) answered "retry it with the same
// Idempotency-Key, which replays it if it was", which no admin call takes.
// It now says to read the change back before sending it again.

it('tells an admin change that may or may not be stored to read it back, not to send an Idempotency-Key', async () => {
  const core = createSandboxCore({ seed: 1 })
  await core.sandbox.ready
  const cutOff = () =>
    Promise.reject(
      Object.assign(new Error('Socket closed unexpectedly'), {
        code: 'REDIS_UNAVAILABLE',
        unsettled: true,
      }),
    )
  const store: Store = {
    kind: 'cut',
    outage: {
      where: 'in its Redis store',
      until: 'Redis takes writes again',
      code: 'REDIS_UNAVAILABLE',
    },
    sync: () => Promise.resolve(undefined),
    resync: () => Promise.resolve(),
    version: () => 0,
    commit: cutOff,
    saveState: cutOff,
    fault: () => undefined,
  }
  core.attach(store)
  for (const [path, body] of [
    ['clock', { advance_seconds: 60 }],
    ['reset', {}],
  ] as const) {
    const answer = await core.router.fetch(
      new Request(`http://localhost/__sandbox/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    )
    expect(answer.status).toBe(503)
    const { detail } = (await answer.json()) as { detail: string }
    expect(detail).toMatch(/may or may not be stored/)
    expect(detail).toMatch(/read it back/)
    expect(detail).not.toMatch(/Idempotency-Key/)
  }
})
