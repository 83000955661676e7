// Runs once: every server here names its own store.
import { request } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'
import { createNamed, postCustomer, startServer } from '../_servers.ts'

// A replica on Redis let go of an account past `cacheRecords` by deleting
// its customers one by one through @msw/data, which scans the collection
// for each: an account of 50,000 customers held the event loop for seconds.
// The deletes also counted as edits of the data, so a clock move under way
// meanwhile was taken for a change of every record, to be stored as a whole
// state that a replica holding some accounts cannot store: 503. Letting go
// of an account is now one pass, and no edit. Since then a change's body is
// read before its watch begins, and a replica applies, loads and lets go of
// nothing while a change is decided: this guards too that a half-sent body
// holds neither the account's load nor its letting go.

it('moves the clock while it lets go of an account, and answers 200', async () => {
  const redis = await startRedis()
  const options = {
    seed: 1,
    customersPerAccount: 50,
    store: { url: redis.url, namespace: 'evict-edit' },
  }
  await startServer(options)
  const replica = await startServer({
    ...options,
    store: { ...options.store, cacheRecords: 1 },
  })
  const { port } = new URL(replica.url)

  // A clock move whose body is not all sent yet.
  const body = JSON.stringify({ advance_seconds: 60 })
  const answer = new Promise<{ status: number; text: string }>(
    (resolve, reject) => {
      const call = request(
        {
          port,
          method: 'POST',
          path: '/__sandbox/clock',
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (response) => {
          let text = ''
          response.setEncoding('utf8')
          response.on('data', (chunk: string) => (text += chunk))
          response.on('end', () =>
            resolve({ status: response.statusCode!, text }),
          )
        },
      )
      call.on('error', reject)
      call.write(body.slice(0, 5))
      void sleep(200).then(async () => {
        // A request of an account loads it; a request of another loads
        // that one, and past cacheRecords the replica lets go of the first.
        expect((await createNamed(replica.url, 'Ada')).status).toBe(201)
        expect(
          (
            await postCustomer(
              replica.url,
              { name: 'Bo', email: 'bo@example.com' },
              { headers: { authorization: `Bearer ${DEMO_KEY_TWO}` } },
            )
          ).status,
        ).toBe(201)
        await sleep(200)
        expect(
          replica.sandbox.db.customers.findMany((q) =>
            q.where({ account_id: 'acct_DemoAccount001' }),
          ),
        ).toEqual([])
        call.end(body.slice(5))
      }, reject)
    },
  )
  const { status, text } = await answer
  expect(status, text).toBe(200)
})
