// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { startRedis } from '../_redis.ts'
import { customerNames, startServer } from '../_servers.ts'

// A request in flight on one replica when it took another replica's whole
// state (a reset, a restore, the state stored after many admin changes, a
// start again after Redis lost the log) was dropped with no answer at all:
// its client saw the connection close, as if the server had died. It now
// answers 503 with Retry-After and stores nothing, so a retry is safe.

it('answers 503 with Retry-After, and stores nothing, for a request in flight when another replica reset the sandbox', async () => {
  const redis = await startRedis()
  const options = {
    seed: 1,
    customersPerAccount: 0,
    store: { url: redis.url, namespace: 'overtaken' },
  }
  const [a, b] = [await startServer(options), await startServer(options)]
  const slow = fetch(`${b.url}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
      'x-sandbox-scenario': 'delay_ms=800',
    },
    body: JSON.stringify({ name: 'Slow', email: 'slow@example.com' }),
  })
  await new Promise((done) => setTimeout(done, 200))
  const reset = await fetch(`${a.url}/__sandbox/reset`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
  expect(reset.status).toBe(200)
  // B takes the reset with its next request, while the slow one waits.
  expect((await fetch(`${b.url}/__sandbox/health`)).status).toBe(200)

  const answer = await slow
  expect(answer.status).toBe(503)
  expect(answer.headers.get('retry-after')).toBe('1')
  expect(await answer.json()).toMatchObject({ code: 'storage_unavailable' })
  expect(await customerNames(a.url)).toEqual([])
  expect(await customerNames(b.url)).toEqual([])
})
