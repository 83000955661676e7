// Runs once: every server here names its own store.
import { expect, it, vi } from 'vitest'
import { DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'
import {
  customerNames,
  emptyFleet,
  postCustomer,
  postJson,
  mintToken,
} from '../_servers.ts'

// Found by an outside tester: with the log lost alone (a DEL by hand), the
// replica that noticed first wrote its own copy as a new generation. One
// that had served nothing since a reset on another replica wrote the state
// of before the reset, and its script dropped the lists of the generation
// Redis named: every customer and token answered 201 since the reset was
// gone from Redis. A replica now keeps the generation Redis names, whose
// lists hold every record, and writes only its copy of the rest.

it('keeps every record answered 201 when a replica behind the fleet starts the lost log again', async () => {
  const { start, client } = await emptyFleet('behind')
  const [first, second, behind] = [await start(), await start(), await start()]
  // Behind: it read the log before the reset, and nothing since.
  expect((await fetch(`${behind.url}/__sandbox/health`)).status).toBe(200)
  expect((await postJson(first.url, '/__sandbox/reset', {})).status).toBe(200)

  const two = { authorization: `Bearer ${DEMO_KEY_TWO}` }
  const created = [
    await postCustomer(first.url, { name: 'Ada', email: 'ada@example.com' }),
    await postCustomer(
      second.url,
      { name: 'Grace', email: 'grace@example.com' },
      { headers: two },
    ),
  ]
  for (const response of created) expect(response.status).toBe(201)
  const token = await mintToken(second.url, DEMO_KEY_TWO)

  // An account added since: only the log held its key, and the replica
  // behind says that it is lost with the log.
  const added = await postJson(first.url, '/__sandbox/api-keys', {})
  expect(added.status).toBe(201)
  const said = vi.spyOn(console, 'error').mockImplementation(() => {})

  expect(await client.del(['{behind}:log', '{behind}:last-state'])).toBe(2)
  // The replica behind notices first, and starts the log again.
  await fetch(`${behind.url}/__sandbox/health`)

  expect(said.mock.calls.map(([line]) => String(line))).toContainEqual(
    expect.stringContaining('1 account(s) added since it last read the log'),
  )
  said.mockRestore()

  const fresh = await start()
  const withToken = await postCustomer(
    fresh.url,
    { name: 'Hopper', email: 'hopper@example.com' },
    { headers: { authorization: `Bearer ${token}` } },
  )
  expect(withToken.status).toBe(201)
  const every = ['Ada', 'Grace', 'Hopper']
  for (const replica of [fresh, behind, first])
    expect((await customerNames(replica.url)).toSorted()).toEqual(every)
})
