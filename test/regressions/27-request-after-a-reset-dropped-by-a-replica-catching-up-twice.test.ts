// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { emptyFleets, postJson } from '../_servers.ts'

// A replica on Redis that keeps few accounts' records, behind two resets
// another replica made, caught up when requests came: its read of the log
// found its place dropped (a whole state came since) and it put back the
// last whole state. A second read sent while that one was applied, from
// the same old place, found it dropped too, and put the same state back a
// second time: requests answered from the first copy, sent after both
// resets were answered, were left out of the journal as if a reset had
// overtaken them (found by the fleet property test). A read sent before
// the state went in is now read again from where that state left the
// replica.

it('answers and journals every request a replica behind two resets gets once they are answered', async () => {
  const { fleet } = await emptyFleets('behind-resets', { cacheRecords: 1 })
  const missed: string[] = []
  for (let round = 0; round < 8; round++) {
    const { start } = fleet()
    const [a, , c] = [await start(), await start(), await start()]
    const { token } = (await (
      await postJson(
        a.url,
        '/v2/tokens',
        { scopes: ['customers:write'] },
        DEMO_KEY_ONE,
      )
    ).json()) as { token: string }
    const resets = await Promise.all([
      postJson(a.url, '/__sandbox/reset', {}),
      postJson(a.url, '/__sandbox/reset', {}),
    ])
    expect(resets.map((r) => r.status)).toEqual([200, 200])
    // Every reset is answered: what comes now is served from the new data.
    const [, withOldToken, create] = await Promise.all([
      postJson(a.url, '/__sandbox/latency', { min_ms: 0, max_ms: 1 }),
      postJson(
        c!.url,
        '/v1/customers',
        { name: 'T', email: 't@example.com' },
        token,
      ),
      postJson(
        c!.url,
        '/v1/customers',
        { name: 'P', email: 'p@example.com' },
        DEMO_KEY_ONE,
      ),
    ])
    expect(withOldToken.status).toBe(401)
    expect(create.status, await create.clone().text()).toBe(201)
    const { requests } = (await (
      await fetch(`${c!.url}/__sandbox/requests`)
    ).json()) as { requests: { request_id: string }[] }
    const journaled = new Set(requests.map((entry) => entry.request_id))
    for (const answer of [withOldToken, create]) {
      const id = answer.headers.get('x-request-id')!
      if (!journaled.has(id)) missed.push(`${answer.status} ${id}`)
    }
  }
  expect(missed).toEqual([])
})
