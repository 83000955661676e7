// Runs once: every server here names its own store.
import { setTimeout as sleep } from 'node:timers/promises'
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { createNamed, startServer } from '../_servers.ts'

// A replica on Redis lets go of the accounts no request used for longest
// past `cacheRecords`. An account larger than that alone was let go of
// whenever no request held it for a moment, and loaded whole again by the
// next: under load (one account past 50,000 customers, the default) the
// replica spent its time reloading it, at a tenth of its speed and a p99
// of half a second. The account of the last request is now kept.

it('keeps the account of its last request loaded, however large', async () => {
  const redis = await startRedis()
  const options = {
    seed: 1,
    customersPerAccount: 5,
    store: { url: redis.url, namespace: 'larger-than-cache' },
  }
  await startServer(options)
  const replica = await startServer({
    ...options,
    store: { ...options.store, cacheRecords: 2 },
  })
  const held = () =>
    replica.sandbox.db.customers.findMany((q) =>
      q.where({ account_id: 'acct_DemoAccount001' }),
    ).length
  for (const name of ['Ada', 'Bo', 'Cy']) {
    expect((await createNamed(replica.url, name)).status).toBe(201)
    // The release, and any letting go, come after the answer.
    await sleep(50)
    expect(held()).toBeGreaterThan(5)
  }
})
