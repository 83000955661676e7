// A way for a test to stand between the Redis store and a real Redis, at
// the scripts the store runs: slow them down, or run something just before
// one is sent. For `vi.mock('@redis/client', …)`; this file imports no
// client of its own, so that the mock can load it.

/** How one script call is sent: `send` sends it, `args` are the call's arguments. */
export type AroundScript = (
  send: () => Promise<unknown>,
  args: [script: string, options: { keys?: string[]; arguments: string[] }],
) => Promise<unknown>

/**
 * `redis` (the `@redis/client` module) with `createClient` making clients
 * whose `evalSha` and `eval` go through `around`.
 *
 * @example
 * vi.mock('@redis/client', async (original) => {
 *   const { aroundScripts } = await import('../_around-scripts.ts')
 *   return aroundScripts(await original(), (send) => sleep(40).then(send))
 * })
 */
export function aroundScripts<
  Module extends { createClient: (...args: never[]) => object },
>(redis: Module, around: AroundScript): Module {
  const createClient = (...args: Parameters<Module['createClient']>) => {
    const client = redis.createClient(...args) as Record<string, unknown>
    for (const name of ['evalSha', 'eval']) {
      const send = (client[name] as (...a: unknown[]) => Promise<unknown>).bind(
        client,
      )
      client[name] = (...call: Parameters<AroundScript>[1]) =>
        around(() => send(...call), call)
    }
    return client
  }
  return { ...redis, createClient }
}
