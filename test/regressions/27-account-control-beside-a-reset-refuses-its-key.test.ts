// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE, DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'
import { emptyFleets, postJson } from '../_servers.ts'

// A replica on Redis that keeps few accounts' records loads a request's
// account when the request comes. An account's own control
// (/__sandbox/account/…) sent beside a reset could wait for the reset and
// then look its API key up in the new data, where the replica had loaded
// no account yet: a fixture key, valid before and after the reset, was
// answered 401 invalid_credentials (found by the fleet property test). It
// is now answered 503 storage_unavailable with Retry-After, as an API call
// that a reset overtook is, and a retry is served.

it('answers an account control that a reset overtook 503 with Retry-After, never 401 for a valid key', async () => {
  const { fleet } = await emptyFleets('beside-reset', { cacheRecords: 1 })
  const seen = new Set<string>()
  // The race is a few turns of the event loop wide: new fleets, each
  // sent the control, a reset on its replica and a write on another.
  for (let round = 0; round < 20; round++) {
    const { start, close } = fleet()
    const [a, b] = [await start(), await start()]
    await fetch(`${a.url}/__sandbox/state`)
    const [answer, reset] = await Promise.all([
      fetch(`${b.url}/__sandbox/account/requests`, {
        headers: { authorization: `Bearer ${DEMO_KEY_TWO}` },
      }),
      postJson(b.url, '/__sandbox/reset', {}),
      postJson(
        a.url,
        '/v1/customers',
        { name: 'Beside', email: 'beside@example.com' },
        DEMO_KEY_ONE,
      ),
    ])
    const { code } = (await answer.json()) as { code?: string }
    seen.add(`${answer.status} ${code ?? ''}`.trim())
    if (answer.status === 503)
      expect(answer.headers.get('retry-after')).toBe('1')
    expect(reset.status).toBe(200)
    // Once the reset is answered, the key is served.
    const retry = await fetch(`${b.url}/__sandbox/account/requests`, {
      headers: { authorization: `Bearer ${DEMO_KEY_TWO}` },
    })
    expect(retry.status).toBe(200)
    await close()
  }
  expect(
    [...seen].filter((s) => s !== '200' && s !== '503 storage_unavailable'),
  ).toEqual([])
})
