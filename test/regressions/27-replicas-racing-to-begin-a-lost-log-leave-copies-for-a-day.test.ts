// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'
import { emptyFleet, postCustomer } from '../_servers.ts'

// Found by an outside tester: when Redis lost everything (a FLUSHALL, a
// restart without persistence), every replica that noticed at once wrote
// its whole copy as a new generation, each account's list under its own
// tag, and raced to begin the log with it. Each that lost left its lists to
// wait a day for an expiry, and the set naming them expired in minutes: a
// whole copy of the data per replica, held for a day, that nothing could
// find. A state refused drops its lists at once.

it('leaves only the lists of the generation that began the log', async () => {
  const { start, client } = await emptyFleet('racing', {
    customersPerAccount: 3,
  })
  const replicas = [await start(), await start(), await start()]
  const two = { authorization: `Bearer ${DEMO_KEY_TWO}` }
  for (let round = 0; round < 6; round++) {
    await client.flushAll()
    const answers = await Promise.all(
      replicas.map((replica, at) =>
        postCustomer(
          replica.url,
          { name: `R${round}x${at}`, email: `r${round}x${at}@example.com` },
          { headers: two },
        ),
      ),
    )
    for (const answer of answers) expect([201, 503]).toContain(answer.status)
  }
  const current = await client.get('{racing}:gen')
  const lists = async () =>
    (await client.keys('{racing:*}:g:*')).filter(
      (key) => !key.endsWith(`:g:${current}`),
    )
  for (let waited = 0; (await lists()).length > 0 && waited < 30; waited++)
    await new Promise((done) => setTimeout(done, 100))
  expect(await lists()).toEqual([])
}, 30_000)
