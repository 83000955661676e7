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
