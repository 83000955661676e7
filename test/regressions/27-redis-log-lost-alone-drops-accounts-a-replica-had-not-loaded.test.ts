// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'
import {
  customerNames,
  emptyFleet,
  postCustomer,
  mintToken,
} from '../_servers.ts'

// Redis lost the log alone (a key evicted under maxmemory, a DEL by hand)
// while each account's list of records stayed. The first replica to notice
// started the log again from its own copy, which held only the accounts its
// requests had loaded, and dropped the generation the others' lists were
// in: every customer of an account it had not loaded was gone, each of them
// answered 201. A replica now begins the log again on the generation Redis
// names, or when the key naming it is gone too, on its own if that one is
// whole: its lists hold every account's records.

it.each([
  ['the log', ['{log-alone}:log', '{log-alone}:last-state']],
  [
    'the log and the key naming its generation',
    ['{log-alone}:log', '{log-alone}:last-state', '{log-alone}:gen'],
  ],
])(
  'keeps the customers of accounts the replica that starts the log again never loaded, with %s lost',
  async (_, lostKeys) => {
    const { start, client } = await emptyFleet('log-alone')
    const [first, second] = [await start(), await start()]
    const two = { authorization: `Bearer ${DEMO_KEY_TWO}` }
    // The first replica loads account one only; the second writes account two.
    expect(
      (await postCustomer(first.url, { name: 'One', email: 'one@example.com' }))
        .status,
    ).toBe(201)
    for (const name of ['Ada', 'Grace']) {
      const created = await postCustomer(
        second.url,
        { name, email: `${name.toLowerCase()}@example.com` },
        { headers: two },
      )
      expect(created.status).toBe(201)
    }

    const token = await mintToken(second.url, DEMO_KEY_TWO)

    // The log and its mark go; every account's list stays.
    expect(await client.del(lostKeys)).toBe(lostKeys.length)
    expect(
      (await postCustomer(first.url, { name: 'Two', email: 'two@example.com' }))
        .status,
    ).toBe(201)

    const third = await start()
    // The token minted before still names its account, on any replica.
    const withToken = await postCustomer(
      third.url,
      { name: 'Hopper', email: 'hopper@example.com' },
      { headers: { authorization: `Bearer ${token}` } },
    )
    expect(withToken.status).toBe(201)
    const every = ['Ada', 'Grace', 'Hopper', 'One', 'Two']
    expect((await customerNames(third.url)).toSorted()).toEqual(every)
    expect((await customerNames(second.url)).toSorted()).toEqual(every)
  },
)
