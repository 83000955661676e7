import { expect, it } from 'vitest'
import { createNamed, customerNames, emptyFleet } from '../_servers.ts'

// Deleting the key that marks where the log's last whole state is (a DEL by
// hand, a cleanup script matching too much) stopped every replica for good:
// each write answered 503, and health said the log held something else and
// to remove the namespace's keys, which would have lost every record. The
// log is still this sandbox's: a replica now finds its newest whole state
// again, marks it, and serves on.

it('serves on, with every record, after the mark of the last whole state was deleted', async () => {
  const { start, client } = await emptyFleet('unmarked')
  const [first, second] = [await start(), await start()]
  expect((await createNamed(first.url, 'Before')).status).toBe(201)
  await customerNames(second.url)
  expect(await client.del('{unmarked}:last-state')).toBe(1)

  expect((await createNamed(second.url, 'After')).status).toBe(201)
  expect((await createNamed(first.url, 'Later')).status).toBe(201)
  expect(await client.get('{unmarked}:last-state')).toBe('0')
  client.destroy()
  for (const replica of [first, second]) {
    expect((await fetch(`${replica.url}/__sandbox/health`)).status).toBe(200)
    expect(await customerNames(replica.url)).toEqual([
      'Before',
      'After',
      'Later',
    ])
  }
})
