import { expect, it } from 'vitest'
import { createNamed, emptyFleet } from '../_servers.ts'

// A replica closed (a rolling restart) as soon as it answered a request
// lost the request's entry in the fleet's journal: entries wait for the next
// turn of the event loop to go to Redis together, and the close had begun by
// then, so Redis's client refused them ("The client is closed"). The fleet
// property test found it as a 401 missing from the journal. A close now
// sends the entries waiting first.

it('keeps in the fleet journal the requests a replica answered just before it closed', async () => {
  const { start } = await emptyFleet('journal-close')
  const reader = await start()
  const ids: string[] = []
  for (let round = 0; round < 20; round++) {
    const replica = await start()
    const response = await createNamed(replica.url, `R${round}`)
    expect(response.status).toBe(201)
    ids.push(response.headers.get('x-request-id')!)
    // Closed in the turn the answer came in, as a test runner or an
    // orchestrator stopping the replica may.
    await replica.close()
  }
  const journal = (await (
    await fetch(`${reader.url}/__sandbox/requests?limit=100`)
  ).json()) as { requests: { request_id: string }[] }
  const held = new Set(journal.requests.map((entry) => entry.request_id))
  expect(ids.filter((id) => !held.has(id))).toEqual([])
})
