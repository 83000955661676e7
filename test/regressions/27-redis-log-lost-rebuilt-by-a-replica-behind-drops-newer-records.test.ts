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

// Found by an outside tester: with the log lost (a DEL by hand), the
// replica that noticed first wrote its own copy as a new generation. One
// that had served nothing since a reset on another replica wrote the state
// of before the reset, and its script dropped the lists of the generation
// Redis named: every customer and token answered 201 since the reset was
// gone from Redis, and a keyed retry made a second record. With the key
// naming the generation deleted too, it did the same from the lists of the
// generation the reset left. A replica behind a whole state now leaves the
// log to one that followed it, which keeps its generation and every list.

const keyed = (url: string) =>
  postCustomer(
    url,
    { name: 'Keyed', email: 'keyed@example.com' },
    { headers: { 'idempotency-key': 'once' } },
  )

it.each([
  ['the log', ['{behind}:log', '{behind}:last-state']],
  [
    'the log and the key naming its generation',
    ['{behind}:log', '{behind}:last-state', '{behind}:gen'],
  ],
])(
  'keeps every record answered 201 when a replica behind a reset finds %s lost',
  async (_, lostKeys) => {
    const { start, client } = await emptyFleet('behind')
    const [first, second, behind] = [
      await start(),
      await start(),
      await start(),
    ]
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
      await keyed(second.url),
    ]
    for (const response of created) expect(response.status).toBe(201)
    const { id } = (await created[2]!.json()) as { id: string }
    const token = await mintToken(second.url, DEMO_KEY_TWO)

    expect(await client.del(lostKeys)).toBe(lostKeys.length)
    // The replica behind notices first, and leaves the log alone.
    const refused = await postCustomer(behind.url, {
      name: 'Refused',
      email: 'refused@example.com',
    })
    expect(refused.status).toBe(503)
    expect(await client.lLen('{behind}:log')).toBe(0)

    // One that followed the reset begins it again when it next serves.
    const withToken = await postCustomer(
      first.url,
      { name: 'Hopper', email: 'hopper@example.com' },
      { headers: { authorization: `Bearer ${token}` } },
    )
    expect(withToken.status).toBe(201)
    const fresh = await start()
    const retried = await keyed(fresh.url)
    expect(retried.status).toBe(201)
    expect(((await retried.json()) as { id: string }).id).toBe(id)
    const every = ['Ada', 'Grace', 'Hopper', 'Keyed']
    for (const replica of [fresh, behind, first, second])
      expect((await customerNames(replica.url)).toSorted()).toEqual(every)
  },
)

it('says which accounts added since its last read a replica that begins the lost log again leaves out', async () => {
  const { start, client } = await emptyFleet('left-out')
  const [first, second] = [await start(), await start()]
  expect((await fetch(`${first.url}/__sandbox/health`)).status).toBe(200)
  // Only the log held the added account's key.
  expect((await postJson(second.url, '/__sandbox/api-keys', {})).status).toBe(
    201,
  )
  const created = await postCustomer(second.url, {
    name: 'Ada',
    email: 'ada@example.com',
  })
  expect(created.status).toBe(201)
  const said = vi.spyOn(console, 'error').mockImplementation(() => {})

  expect(await client.del(['{left-out}:log', '{left-out}:last-state'])).toBe(2)
  await fetch(`${first.url}/__sandbox/health`)
  expect(said.mock.calls.map(([line]) => String(line))).toContainEqual(
    expect.stringContaining('1 account(s) added since it last read the log'),
  )
  said.mockRestore()
  expect(await customerNames((await start()).url)).toEqual(['Ada'])
})
