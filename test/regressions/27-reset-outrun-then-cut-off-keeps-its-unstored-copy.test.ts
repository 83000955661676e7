// Runs once: every server here names its own store.
import { connect, createServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { expect, it, onTestFinished } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { startRedis } from '../_redis.ts'
import { postJson, startServer } from '../_servers.ts'

// Found by the fleet property test on a Redis Cluster (a resharding cut
// the connection): a reset that another replica's write outran is decided
// again after the replica catches up. When that catch-up failed (Redis
// away for a moment), the replica kept the reset in its own copy, which
// Redis never stored, and went on applying the others' writes on top of
// it: its own token, stored and answered 201 before the reset, was gone
// from its answers for good, while every other replica served it.

/**
 * A TCP proxy in front of `target` that, once `armed`, holds the first
 * command that stores a whole state until `meanwhile()` is done, passes
 * it and its answer, and then cuts every connection and refuses new ones
 * until `restore()`.
 */
async function cuttingProxy(target: URL) {
  const sockets = new Set<Socket>()
  let down = false
  let meanwhile: (() => Promise<unknown>) | undefined
  const proxy = createServer((client) => {
    if (down) {
      client.destroy()
      return
    }
    const redis = connect(Number(target.port), target.hostname)
    sockets.add(client).add(redis)
    for (const socket of [client, redis]) socket.on('error', () => {})
    let held: Buffer[] | undefined
    let cutAfterAnswer = false
    client.on('data', (chunk: Buffer) => {
      if (held) {
        held.push(chunk)
        return
      }
      if (meanwhile && chunk.includes('{"state":')) {
        const run = meanwhile
        meanwhile = undefined
        held = [chunk]
        void run().then(() => {
          cutAfterAnswer = true
          for (const part of held!) redis.write(part)
        })
        return
      }
      redis.write(chunk)
    })
    redis.on('data', (chunk: Buffer) => {
      client.write(chunk)
      if (!cutAfterAnswer) return
      down = true
      for (const socket of sockets) socket.destroy()
    })
  })
  await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done))
  onTestFinished(() => {
    for (const socket of sockets) socket.destroy()
    proxy.close()
  })
  return {
    url: `redis://127.0.0.1:${(proxy.address() as AddressInfo).port}/0`,
    arm: (work: () => Promise<unknown>) => {
      meanwhile = work
    },
    isDown: () => down,
    restore: () => {
      down = false
    },
  }
}

const tokensOf = async (url: string): Promise<string[]> => {
  const state = (await (await fetch(`${url}/__sandbox/state`)).json()) as {
    tokens: { id: string }[]
  }
  return state.tokens.map((token) => token.id).toSorted()
}

it('puts back what Redis holds after a reset that was outrun and then cut off', async () => {
  const redis = await startRedis()
  const proxy = await cuttingProxy(new URL(redis.url))
  const namespace = 'outrun-reset'
  const options = { seed: 1, customersPerAccount: 0 }
  const cut = await startServer({
    ...options,
    store: { url: proxy.url, namespace },
  })
  const other = await startServer({
    ...options,
    store: { url: redis.url, namespace },
  })

  // A token stored through the replica that resets next.
  const token = await postJson(
    cut.url,
    '/v2/tokens',
    { scopes: ['customers:write'] },
    DEMO_KEY_ONE,
  )
  expect(token.status).toBe(201)
  const { id } = (await token.json()) as { id: string }

  // While the reset's state is on its way to Redis, the other replica
  // queues a fault, which the reset was decided without: it is outrun.
  // Then Redis is gone before the replica could catch up.
  let fault = 0
  proxy.arm(async () => {
    fault = (
      await postJson(other.url, '/__sandbox/scenarios', {
        operation: 'createCustomer',
        status: 503,
        times: 1,
      })
    ).status
  })
  const reset = await postJson(cut.url, '/__sandbox/reset', {})
  expect(fault).toBe(201)
  expect(proxy.isDown()).toBe(true)
  expect(reset.status).toBe(503)
  expect(((await reset.json()) as { code: string }).code).toBe(
    'storage_unavailable',
  )

  // Redis is back: the replica serves what the fleet stored, its own token
  // among it, as the other replica does.
  proxy.restore()
  let health = 503
  for (let tries = 0; health !== 200 && tries < 100; tries++) {
    await new Promise((done) => setTimeout(done, 100))
    health = (await fetch(`${cut.url}/__sandbox/health`)).status
  }
  expect(health).toBe(200)
  expect(await tokensOf(other.url)).toEqual([id])
  expect(await tokensOf(cut.url)).toEqual([id])
}, 30_000)
