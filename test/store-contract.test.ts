import { describe, expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import type { SandboxServerOptions } from '../src/runtimes/node.ts'
import { startRedis } from './_redis.ts'
import { startServer, tempDataFile } from './_servers.ts'

// What every store promises, written once and run against each (in the
// shape of srvx's test/_tests.ts): memory (no store), the data file, Redis.
// A durable store also promises that a new server on the same store picks
// up where the last one stopped.

interface StoreUnderTest {
  name: string
  /** Options for a server on this store; a second call reaches the same store. */
  open(): Promise<() => SandboxServerOptions>
  durable: boolean
}

const STORES: StoreUnderTest[] = [
  { name: 'memory', durable: false, open: async () => () => ({}) },
  {
    name: 'file',
    durable: true,
    async open() {
      const dataFile = await tempDataFile('cts-contract-')
      return () => ({ dataFile })
    },
  },
  {
    name: 'redis',
    durable: true,
    async open() {
      const { url } = await startRedis()
      return () => ({ store: url })
    },
  },
]

const headers = {
  authorization: `Bearer ${DEMO_KEY_ONE}`,
  'content-type': 'application/json',
}

const createCustomer = (url: string, name: string, key?: string) =>
  fetch(`${url}/v1/customers`, {
    method: 'POST',
    headers: { ...headers, ...(key && { 'idempotency-key': key }) },
    body: JSON.stringify({ name, email: `${name.toLowerCase()}@example.com` }),
  })

const state = async (url: string) =>
  (await (await fetch(`${url}/__sandbox/state`)).json()) as {
    customers: { id: string; name: string }[]
    tokens: { id: string }[]
  }

for (const store of STORES) {
  describe(`the ${store.name} store`, () => {
    const start = async (options: () => SandboxServerOptions) =>
      startServer({ customersPerAccount: 0, uniqueEmail: true, ...options() })

    it('keeps a created customer and token, and serves them', async () => {
      const server = await start(await store.open())
      const created = await createCustomer(server.url, 'Ada')
      expect(created.status).toBe(201)
      const { id } = (await created.json()) as { id: string }
      const token = await fetch(`${server.url}/v2/tokens`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ scopes: ['customers:write'] }),
      })
      expect(token.status).toBe(201)
      const { token: secret } = (await token.json()) as { token: string }
      expect(
        (
          await fetch(`${server.url}/v1/customers`, {
            method: 'POST',
            headers: { ...headers, authorization: `Bearer ${secret}` },
            body: JSON.stringify({ name: 'Bo', email: 'bo@example.com' }),
          })
        ).status,
      ).toBe(201)
      expect((await state(server.url)).customers.map((c) => c.id)).toContain(id)
    })

    it('refuses a second customer with a taken email, and replays a keyed create', async () => {
      const server = await start(await store.open())
      const first = await createCustomer(server.url, 'Ada', 'k-1')
      expect(first.status).toBe(201)
      expect((await createCustomer(server.url, 'Ada')).status).toBe(409)
      const replay = await createCustomer(server.url, 'Ada', 'k-1')
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      expect(await replay.text()).toBe(await first.text())
    })

    it('takes a queued fault once, and counts a rate limit', async () => {
      const server = await start(await store.open())
      await fetch(`${server.url}/__sandbox/scenarios`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ operation: 'createCustomer', status: 503 }),
      })
      const statuses = await Promise.all(
        ['A', 'B', 'C'].map((n) =>
          createCustomer(server.url, n).then((r) => r.status),
        ),
      )
      expect(statuses.toSorted()).toEqual([201, 201, 503])
    })

    if (store.durable) {
      it('picks up where the last server stopped: records, keys, clocks and scenarios', async () => {
        const options = await store.open()
        const first = await start(options)
        const created = await createCustomer(first.url, 'Ada', 'k-2')
        await fetch(`${first.url}/__sandbox/account/clock`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ advance_seconds: 86_400 }),
        })
        await fetch(`${first.url}/__sandbox/scenarios`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ operation: 'createToken', status: 429 }),
        })
        await first.close()

        const second = await start(options)
        const replay = await createCustomer(second.url, 'Ada', 'k-2')
        expect(await replay.text()).toBe(await created.text())
        const clock = (await (
          await fetch(`${second.url}/__sandbox/account/clock`, { headers })
        ).json()) as { now: string }
        expect(Date.parse(clock.now) - Date.now()).toBeGreaterThan(86_000_000)
        const token = await fetch(`${second.url}/v2/tokens`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ scopes: ['customers:read'] }),
        })
        expect(token.status).toBe(429)
      })
    }
  })
}
