import { expect, it } from 'vitest'
import { createNamed, customerNames, emptyFleet } from '../_servers.ts'

// When Redis lost the log (FLUSHALL, a restart without persistence) and
// another replica wrote it again, from its own copy, before this one read,
// the new log could be exactly as long as the place this replica had
// reached, with its last whole state at the same place. This replica read
// on as if nothing had happened: it kept serving a record that Redis no
// longer held, never took the other replica's record, and appended its own
// writes on top of a history it did not hold. The fleet stayed split for
// good. A replica now checks the mark of the entry just before its place.

it('keeps two replicas on one history when the log Redis lost grew back to the same length', async () => {
  const { start, client } = await emptyFleet('grown-back')
  const [first, second] = [await start(), await start()]
  // The log: the seeded state, then First (both replicas follow it).
  expect((await createNamed(first.url, 'First')).status).toBe(201)
  await customerNames(second.url)
  await client.flushAll()

  // The second replica writes the log again: its state, then Second, as
  // long as the first replica's place after First.
  expect((await createNamed(second.url, 'Second')).status).toBe(201)
  expect((await createNamed(first.url, 'Third')).status).toBe(201)

  const views = [
    await customerNames(first.url),
    await customerNames(second.url),
  ]
  expect(views[0]).toEqual(views[1])
  expect(views[0]).toEqual(expect.arrayContaining(['Second', 'Third']))
})
