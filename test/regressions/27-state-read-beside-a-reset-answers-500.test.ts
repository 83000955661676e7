// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { emptyFleets, postJson } from '../_servers.ts'

// A read of the whole state waits for its store (a replica of a fleet
// loads every account first) and its turn among large answers before it
// is built: a reset sent beside it was still refilling the data when the
// read was built, and the read answered 500 internal_error ("it is still
// seeding"), found by the fleet property test. The read now waits for the
// new data, and answers it.

it('answers a state read sent beside a reset 200, never 500', async () => {
  const { fleet } = await emptyFleets('read-beside-reset', {
    cacheRecords: 1,
  })
  const statuses = new Set<number>()
  for (let round = 0; round < 12; round++) {
    const { start, close } = fleet()
    const replicas = [await start(), await start(), await start()]
    const { url } = replicas[1]!
    await fetch(`${replicas[0]!.url}/__sandbox/state`)
    await postJson(
      url,
      '/v1/customers',
      { name: 'A', email: 'a@example.com' },
      DEMO_KEY_ONE,
    )
    await Promise.all([
      postJson(url, '/__sandbox/scenarios', {
        operation: 'createCustomer',
        status: 503,
        times: 1,
      }),
      postJson(
        url,
        '/v1/customers',
        { name: 'F', email: 'f@example.com' },
        DEMO_KEY_ONE,
      ),
    ])
    const [state] = await Promise.all([
      fetch(`${url}/__sandbox/state`),
      postJson(url, '/__sandbox/snapshots', { name: 'p' }),
      postJson(url, '/__sandbox/reset', {}),
      postJson(
        url,
        '/v1/customers',
        { name: 'B', email: 'b@example.com' },
        DEMO_KEY_ONE,
      ),
    ])
    statuses.add(state.status)
    await state.body?.cancel()
    await close()
  }
  expect([...statuses]).toEqual([200])
})
