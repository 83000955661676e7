// Runs once: every server here names its own store.
import { connect, createServer, type AddressInfo } from 'node:net'
import { createClient } from '@redis/client'
import { expect, it, onTestFinished } from 'vitest'
import { startRedis } from '../_redis.ts'
import { createNamed, customerNames, startServer } from '../_servers.ts'

// A reset forgets the fleet's rate-limit counts by scanning Redis for them,
// and the whole scan had to end within the store's timeout (3 s). On a Redis
// that other sandboxes or programs fill with a million keys, each SCAN
// answered in time but all of them did not: the reset answered 500 "a bug
// in the sandbox", health said Redis answered nothing, and no reset could
// ever succeed there. Each call is now bounded alone, and a store that
// fails there answers 503 like any write it could not store.

/**
 * A TCP proxy in front of Redis that holds each of Redis's answers 5 ms, as
 * a Redis across a network does; gives its URL.
 */
async function slowLink(port: number): Promise<string> {
  const server = createServer((client) => {
    const redis = connect(port, '127.0.0.1')
    let sent = Promise.resolve()
    redis.on('data', (chunk) => {
      sent = sent
        .then(() => new Promise((done) => setTimeout(done, 5)))
        .then(() => {
          client.write(chunk)
        })
    })
    client.pipe(redis)
    const end = () => {
      client.destroy()
      redis.destroy()
    }
    client.on('close', end).on('error', end)
    redis.on('close', end).on('error', end)
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  onTestFinished(() => new Promise<void>((done) => server.close(() => done())))
  return `redis://127.0.0.1:${(server.address() as AddressInfo).port}/0`
}

it('resets a sandbox whose Redis holds a million other keys', async () => {
  const redis = await startRedis({
    extraArgs: ['--enable-debug-command', 'yes'],
  })
  const client = createClient({ url: redis.url }).on('error', () => {})
  await client.connect()
  await client.sendCommand(['DEBUG', 'POPULATE', '1000000', 'other'])
  client.destroy()
  const server = await startServer({
    seed: 1,
    customersPerAccount: 0,
    store: { url: await slowLink(redis.port), namespace: 'crowded' },
  })
  expect((await createNamed(server.url, 'Before')).status).toBe(201)

  const reset = await fetch(`${server.url}/__sandbox/reset`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
  expect(reset.status).toBe(200)
  expect(await customerNames(server.url)).toEqual([])
  expect((await fetch(`${server.url}/__sandbox/health`)).status).toBe(200)
}, 120_000)
