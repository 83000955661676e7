import { connect, createServer, type AddressInfo, type Socket } from 'node:net'
import { onTestFinished } from 'vitest'
import {
  createRoundRobinProxy,
  type RoundRobinProxy,
} from '../examples/shared-sandbox/proxy.mjs'

// @note One proxy for the tests and the example, so that the example's
// load balancer is the one the end-to-end tests exercise.

/**
 * Starts a round-robin reverse proxy on a free loopback port in front of
 * `targets` (each request to the next one; a 502 with a JSON body when that
 * one is down), closed when the test finishes.
 *
 * @example
 * const proxy = await startRoundRobinProxy([a.url, b.url, c.url])
 * await fetch(`${proxy.url}/__sandbox/state`) // a, then b, then c
 * @see createRoundRobinProxy
 */
export async function startRoundRobinProxy(
  targets: string[],
): Promise<RoundRobinProxy> {
  const proxy = await createRoundRobinProxy(targets)
  onTestFinished(() => proxy.close())
  return proxy
}

/** A TCP proxy started by `startHoldingProxy`. */
export interface HoldingProxy {
  /** `redis://127.0.0.1:<port>/0`: the proxy, as a Redis URL. */
  url: string
  /**
   * From now on, holds each connection whose client sends a chunk that
   * `matches`: that chunk and all the client sends after it stay in the
   * proxy (a Redis that stopped answering after a command came in), until
   * `release()`, which also ends the hold.
   */
  hold(matches: (chunk: Buffer) => boolean): HeldTraffic
  /** Cuts every connection, and refuses new ones until `restore()`. */
  cut(): void
  /** Whether the proxy was cut and not restored since. */
  isDown(): boolean
  /** Takes new connections again after a cut. */
  restore(): void
}

/** What `HoldingProxy.hold` holds. */
export interface HeldTraffic {
  /** Resolves once a chunk is held. */
  reached: Promise<void>
  /**
   * Sends what is held on to the target, in order. Those connections then
   * pass what their clients send again; with `cutAfterAnswer`, they pass
   * nothing more, and the proxy cuts (as `cut()` does) as soon as it has
   * passed on the target's answer on one of them.
   */
  release(options?: { cutAfterAnswer?: boolean }): void
}

/**
 * Starts a TCP proxy on a free loopback port in front of the Redis at
 * `target` (a `redis://host:port` URL), which passes everything until told
 * to hold what matches or to cut; closed, with its connections, when the
 * test finishes.
 *
 * @example
 * const proxy = await startHoldingProxy(redis.url)
 * const held = proxy.hold((chunk) => chunk.includes('\r\nDEL\r\n'))
 * void held.reached.then(() => held.release({ cutAfterAnswer: true }))
 * await startServer({ store: { url: proxy.url, namespace: 'held' } })
 */
export async function startHoldingProxy(target: string): Promise<HoldingProxy> {
  const { hostname, port } = new URL(target)
  const sockets = new Set<Socket>()
  let down = false
  /** The hold in force: its test, and how to let each held connection go. */
  let holding:
    | {
        matches: (chunk: Buffer) => boolean
        releases: ((cutAfterAnswer: boolean) => void)[]
        reached: () => void
      }
    | undefined
  const cut = () => {
    down = true
    for (const socket of sockets) socket.destroy()
  }
  const proxy = createServer((client) => {
    if (down) {
      client.destroy()
      return
    }
    const redis = connect(Number(port), hostname)
    sockets.add(client).add(redis)
    for (const socket of [client, redis]) socket.on('error', () => {})
    let held: Buffer[] | undefined
    let cutAfterAnswer = false
    client.on('data', (chunk: Buffer) => {
      if (held) {
        held.push(chunk)
        return
      }
      if (holding?.matches(chunk)) {
        held = [chunk]
        holding.releases.push((thenCut) => {
          const parts = held!
          // @note With a cut to come, what the client sends from now on
          // stays held, and goes with the connection.
          cutAfterAnswer = thenCut
          if (!thenCut) held = undefined
          for (const part of parts.splice(0)) redis.write(part)
        })
        holding.reached()
        return
      }
      redis.write(chunk)
    })
    redis.on('data', (chunk: Buffer) => {
      client.write(chunk)
      if (cutAfterAnswer) cut()
    })
    redis.on('end', () => client.end())
  })
  await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done))
  onTestFinished(() => {
    for (const socket of sockets) socket.destroy()
    proxy.close()
  })
  return {
    url: `redis://127.0.0.1:${(proxy.address() as AddressInfo).port}/0`,
    hold(matches) {
      let reached!: () => void
      const done = new Promise<void>((resolve) => {
        reached = resolve
      })
      const hold = {
        matches,
        releases: [] as ((cutAfterAnswer: boolean) => void)[],
        reached,
      }
      holding = hold
      return {
        reached: done,
        release({ cutAfterAnswer = false } = {}) {
          if (holding === hold) holding = undefined
          for (const release of hold.releases.splice(0)) release(cutAfterAnswer)
        },
      }
    },
    cut,
    isDown: () => down,
    restore: () => {
      down = false
    },
  }
}
