// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { createFiller, startServer, tempDataFile } from '../_servers.ts'

// A server with --data-file forgot its queued scenarios and latency on a
// restart, so a test that queued a fault before a rolling restart never saw
// it; and a fault taken before a restart must not come back after it.

const queue = (url: string, body: object, path = 'scenarios', key?: string) =>
  fetch(`${url}/__sandbox/${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key && { authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify(body),
  })

it('keeps queued scenarios, an account queue and the latency across a restart, and takes each fault once', async () => {
  const dataFile = await tempDataFile('cts-scn-')
  const first = await startServer({ dataFile, customersPerAccount: 0 })
  expect(
    (
      await queue(first.url, {
        operation: 'createCustomer',
        status: 503,
        times: 2,
      })
    ).status,
  ).toBe(201)
  expect(
    (
      await queue(
        first.url,
        { operation: 'createToken', status: 429 },
        'account/scenarios',
        DEMO_KEY_ONE,
      )
    ).status,
  ).toBe(201)
  expect(
    (
      await fetch(`${first.url}/__sandbox/latency`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ min_ms: 1, max_ms: 2 }),
      })
    ).status,
  ).toBe(200)
  // The first of the two 503s is taken before the restart.
  expect((await createFiller(first.url, 1)).status).toBe(503)
  await first.close()

  const again = await startServer({ dataFile, customersPerAccount: 0 })
  const listed = (await (
    await fetch(`${again.url}/__sandbox/scenarios`)
  ).json()) as {
    scenarios: { operation: string }[]
  }
  expect(listed.scenarios).toMatchObject([{ operation: 'createCustomer' }])
  const latency = await (await fetch(`${again.url}/__sandbox/latency`)).json()
  expect(latency).toEqual({ min_ms: 1, max_ms: 2 })
  expect((await createFiller(again.url, 2)).status).toBe(503)
  expect((await createFiller(again.url, 3)).status).toBe(201)
  const token = await fetch(`${again.url}/v2/tokens`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ scopes: ['customers:read'] }),
  })
  expect(token.status).toBe(429)
  await again.close()

  // Both faults were taken: a third start has none left.
  const third = await startServer({ dataFile, customersPerAccount: 0 })
  expect((await createFiller(third.url, 4)).status).toBe(201)
})
