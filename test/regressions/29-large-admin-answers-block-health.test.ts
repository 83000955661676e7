import { expect, it } from 'vitest'
import { startServer } from '../_servers.ts'

// 500 clients asking for GET /__sandbox/export at once, at 5,000 customers
// per account: each answer was serialised whole in one go, and the health
// check waited about 15 s behind them. The large answers are now written in
// slices that leave the event loop to others between them.

const CLIENTS = 20

it('answers health while many clients read large exports, and streams every export whole', async () => {
  const server = await startServer({ seed: 1, customersPerAccount: 2000 })
  const exports = Array.from({ length: CLIENTS }, async () => {
    const response = await fetch(`${server.url}/__sandbox/export`)
    const body = (await response.json()) as {
      data: { customers: unknown[] }
      secrets: string
    }
    return { status: response.status, body }
  })
  // @note Not asserted: that health comes before the last export. Which of
  // the connections opened at once node:http takes first is not ours to say.
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
