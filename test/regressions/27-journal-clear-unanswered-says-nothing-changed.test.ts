// Runs once: every server here names its own store.
import { connect, createServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { expect, it, onTestFinished } from 'vitest'
import { startRedis } from '../_redis.ts'
import { postCustomer, startServer } from '../_servers.ts'

// DELETE /__sandbox/requests whose command Redis never answered (a stall,
// a partition) answered 503 "nothing was changed. Retry once Redis takes
// writes again": the command was sent, and Redis may have run it. The
// fleet's journal is cleared as a write now, whose 503 says it may or may
// not be done and to read it back.

/**
 * A TCP proxy in front of `target` that passes everything until `holding()`
 * says so, and then holds what the store sends: a Redis that stopped
 * answering after a command went out.
 */
async function stallingProxy(
  target: URL,
  holding: (chunk: Buffer) => boolean,
): Promise<string> {
  const sockets = new Set<Socket>()
  const proxy = createServer((client) => {
    const redis = connect(Number(target.port), target.hostname)
    sockets.add(client).add(redis)
    for (const socket of [client, redis]) socket.on('error', () => {})
    let held = false
    client.on('data', (chunk: Buffer) => {
      held ||= holding(chunk)
      if (!held) redis.write(chunk)
    })
    redis.pipe(client)
  })
  await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done))
  onTestFinished(() => {
    for (const socket of sockets) socket.destroy()
    proxy.close()
  })
  return `redis://127.0.0.1:${(proxy.address() as AddressInfo).port}/0`
}

it('says a journal clear Redis did not answer may or may not be done', async () => {
  const redis = await startRedis()
  let stall = false
  const url = await stallingProxy(
    new URL(redis.url),
    (chunk) => stall && chunk.includes('\r\nDEL\r\n'),
  )
  // The store's timeout (3 s) shortened, as the store takes it: a
  // variable, as no option of the server names it.
  const store = { url, namespace: 'stalled', timeoutMs: 500 }
  const replica = await startServer({ seed: 1, customersPerAccount: 0, store })
  expect(
    (await postCustomer(replica.url, { name: 'Ada', email: 'a@example.com' }))
      .status,
  ).toBe(201)

  stall = true
  const cleared = await fetch(`${replica.url}/__sandbox/requests`, {
    method: 'DELETE',
  })
  expect(cleared.status).toBe(503)
  expect(cleared.headers.get('retry-after')).toMatch(/^\d+$/)
  const { detail } = (await cleared.json()) as { detail: string }
  expect(detail).toContain('(REDIS_TIMEOUT), so it may or may not be stored')
  expect(detail).toContain('read it back')
  expect(detail).not.toContain('nothing was changed')
  // The replica is still up, and says why.
  expect((await fetch(`${replica.url}/__sandbox/health`)).status).toBe(503)
}, 30_000)
