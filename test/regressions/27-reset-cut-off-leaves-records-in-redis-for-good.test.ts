// Runs once: every server here names its own store.
import { createClient } from '@redis/client'
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { startServer } from '../_servers.ts'

// A reset writes its records to a new generation's keys before it appends
// its state, each key to expire unless the state is stored: a replica
// killed halfway (or whose connection was cut) leaves nothing for good. Each
// list was pushed first and given its expiry after, in two commands: cut
// between them, a list of thousands of records stayed in Redis for ever.
// Each slice now gets its expiry in the same command.

it('leaves no records of a reset cut off halfway without an expiry', async () => {
  const redis = await startRedis()
  const server = await startServer({
    seed: 1,
    customersPerAccount: 20_000,
    limits: { customersPerAccount: 100_000, records: 300_000 },
    store: { url: redis.url, namespace: 'cut' },
  })
  const admin = createClient({ url: redis.url })
  await admin.connect()
  try {
    const current = await admin.get('{cut}:gen')
    const reset = fetch(`${server.url}/__sandbox/reset`, { method: 'POST' })
    // Cut off as soon as the new generation's first records are in Redis.
    const started = Date.now()
    for (;;) {
      const { keys } = await admin.scan('0', {
        MATCH: '{cut:*}:g:*',
        COUNT: 1000,
      })
      if (keys.some((key) => !key.endsWith(`:g:${current}`))) break
      expect(Date.now() - started).toBeLessThan(20_000)
    }
    await admin.sendCommand([
      'CLIENT',
      'KILL',
      'TYPE',
      'normal',
      'SKIPME',
      'yes',
    ])
    await (await reset).body?.cancel()

    const kept = await admin.get('{cut}:gen')
    const left: string[] = []
    // The generation's own keys, and each account's list under its tag.
    for (const key of await admin.keys('{cut*}:g:*')) {
      if (key.startsWith(`{cut}:g:${kept}:`) || key.endsWith(`:g:${kept}`))
        continue
      if ((await admin.pTTL(key)) < 0) left.push(key)
    }
    expect(left).toEqual([])
  } finally {
    admin.destroy()
  }
}, 60_000)
