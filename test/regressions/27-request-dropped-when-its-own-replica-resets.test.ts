// Runs once: every server here names its own store.
import { expect, it, onTestFinished } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { startRedis } from '../_redis.ts'
import { createSandboxServer } from '../../src/runtimes/node.ts'
import { customerNames, startServer } from '../_servers.ts'

// A request in flight on the replica that ran a reset or a restore was
// dropped with no answer: its client saw the connection close, while the
// same request on any other replica was answered 503 with Retry-After.
// Behind a load balancer which replica ran the reset is chance: now both
// answer 503 and store nothing, so a retry is safe.

const slowCustomer = (url: string): Promise<Response> =>
  fetch(`${url}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
      'x-sandbox-scenario': 'delay_ms=1500',
    },
    body: JSON.stringify({ name: 'Slow', email: 'slow@example.com' }),
  })

const post = (url: string, path: string, body: unknown): Promise<Response> =>
  fetch(`${url}/__sandbox/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

it.each([
  ['a reset', async (url: string) => post(url, 'reset', {})],
  [
    'a restored snapshot',
    async (url: string) => post(url, 'snapshots/restore', { name: 'empty' }),
  ],
])(
  'answers 503 with Retry-After, and stores nothing, for a request in flight on the replica that ran %s',
  async (_, change) => {
    const redis = await startRedis()
    const options = {
      seed: 1,
      customersPerAccount: 0,
      store: { url: redis.url, namespace: 'own-reset' },
    }
    const [a, b] = [await startServer(options), await startServer(options)]
    expect((await post(a.url, 'snapshots', { name: 'empty' })).status).toBe(201)
    const slow = slowCustomer(a.url)
    await new Promise((done) => setTimeout(done, 300))
    expect((await change(a.url)).status).toBe(200)

    const answer = await slow
    expect(answer.status).toBe(503)
    expect(answer.headers.get('retry-after')).toBe('1')
    expect(await answer.json()).toMatchObject({ code: 'storage_unavailable' })
    expect(await customerNames(a.url)).toEqual([])
    expect(await customerNames(b.url)).toEqual([])
  },
)

it('still drops a request in flight on a sandbox of its own when it is reset, as a restarted server would', async () => {
  // In memory on every project: the store under test could be a shared one.
  const server = await createSandboxServer({
    port: 0,
    playground: false,
    seed: 1,
    customersPerAccount: 0,
  })
  onTestFinished(() => server.close())
  const slow = slowCustomer(server.url).then(
    (response) => response.status,
    () => 'closed',
  )
  await new Promise((done) => setTimeout(done, 300))
  expect((await post(server.url, 'reset', {})).status).toBe(200)
  expect(await slow).toBe('closed')
  expect(await customerNames(server.url)).toEqual([])
})
