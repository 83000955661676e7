// Regression (issue 29): many clients reading one large admin answer held the health check.
import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { createNamed, startServer } from '../_servers.ts'

// 500 clients asking for GET /__sandbox/export at once, at 5,000 customers
// per account, held the health check for about 15 s: each answer made its
// own copy of the data and its own JSON of it, and 500 copies alive at once
// filled the heap, whose collections held the event loop for seconds. The
// clients of one version of the data now share one copy and one JSON.

setFlagsFromString('--expose-gc')
const collect = runInNewContext('gc') as () => void

/** The heap in use once the garbage is collected. */
const heapUsed = (): number => {
  collect()
  collect()
  return process.memoryUsage().heapUsed
}

/** Asks for `path` on a fresh connection and stops reading once the answer has begun. */
async function startReading(port: number, path: string): Promise<Socket> {
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => {})
  await once(socket, 'connect')
  socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`)
  const [first] = (await once(socket, 'data')) as [Buffer]
  socket.pause()
  expect(first.toString('latin1', 0, 12)).toBe('HTTP/1.1 200')
  return socket
}

const READERS = 40

it('holds one copy of the data for many clients reading one export, not one each', async () => {
  const server = await startServer({ seed: 1, customersPerAccount: 5000 })
  // What one client costs: the shared copy and node's own buffers.
  await (await fetch(`${server.url}/__sandbox/export`)).arrayBuffer()
  const start = heapUsed()
  const held = server.sandbox.export()
  const copy = heapUsed() - start
  expect(held.data.customers.length).toBe(10_000)

  const readers = await Promise.all(
    Array.from({ length: READERS }, () =>
      startReading(server.port, '/__sandbox/export'),
    ),
  )
  // Each one copy of the data, before; now one between them.
  expect(heapUsed() - start).toBeLessThan(copy * 6)
  for (const socket of readers) socket.destroy()
}, 60_000)

it('streams every export whole to many clients reading at once, and answers health meanwhile', async () => {
  const server = await startServer({ seed: 1, customersPerAccount: 2000 })
  const exports = Array.from({ length: 20 }, async () => {
    const response = await fetch(`${server.url}/__sandbox/export`)
    const body = (await response.json()) as {
      data: { customers: unknown[] }
      secrets: string
    }
    return { status: response.status, body }
  })
  const health = await fetch(`${server.url}/__sandbox/health`)
  expect(health.status).toBe(200)
  const answers = await Promise.all(exports)
  const customers = server.sandbox.customers.count()
  for (const { status, body } of answers) {
    expect(status).toBe(200)
    expect(body.secrets).toBe('masked')
    expect(body.data.customers).toHaveLength(customers)
  }
})

it('writes GET /__sandbox/state and /requests as the same JSON as before, with their headers', async () => {
  const server = await startServer({ seed: 1, customersPerAccount: 2000 })
  await fetch(`${server.url}/v1/customers`)
  const state = await fetch(`${server.url}/__sandbox/state`)
  expect(state.status).toBe(200)
  expect(state.headers.get('content-type')).toBe('application/json')
  expect(state.headers.get('etag')).toMatch(/"/)
  // Key for key as the JavaScript API gives it; only `now` has moved on.
  const { now: _, ...expected } = server.sandbox.state()
  expect(await state.json()).toEqual({ now: expect.any(String), ...expected })
  const again = await fetch(`${server.url}/__sandbox/state`, {
    headers: { 'if-none-match': state.headers.get('etag')! },
  })
  expect(again.status).toBe(304)
  const requests = await fetch(`${server.url}/__sandbox/requests`)
  expect(await requests.json()).toEqual({
    requests: server.sandbox.journal.list(),
  })
})

it('gives each export and state the data as it is when asked, a write between them included', async () => {
  const server = await startServer({ seed: 1, customersPerAccount: 3 })
  const read = async (path: string) =>
    (await (await fetch(`${server.url}/__sandbox/${path}`)).json()) as {
      data: {
        customers: unknown[]
        api_keys: { secret: string }[]
        clock: unknown
      }
      customers: unknown[]
      journal: unknown[]
      requests: unknown[]
    }
  const included = await read('export?secrets=include')
  const masked = await read('export')
  const stateBefore = await read('state')
  const journalBefore = await read('requests')
  expect((await createNamed(server.url, 'Ada')).status).toBe(201)
  const after = await read('export?secrets=include')
  const { clock: _, ...data } = server.sandbox.export().data
  expect(after.data).toEqual({ ...data, clock: expect.any(Object) })
  expect(after.data.customers).toHaveLength(included.data.customers.length + 1)
  expect(after.journal).toHaveLength(1)
  expect(journalBefore.requests).toEqual([])
  expect((await read('requests')).requests).toEqual(
    server.sandbox.journal.list(),
  )
  expect((await read('state')).customers).toHaveLength(
    stateBefore.customers.length + 1,
  )
  // Masked unless asked, whichever was asked first.
  expect(included.data.api_keys[0]!.secret).toBe(DEMO_KEY_ONE)
  expect(masked.data.api_keys[0]!.secret).toMatch(/…/)
  expect((await read('export')).data.api_keys[0]!.secret).toMatch(/…/)
})
