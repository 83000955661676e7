// Runs once: every server here names its own store.
import { copyFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { startServer, tempDataFile } from '../_servers.ts'

const start = (dataFile: string) =>
  startServer({ customersPerAccount: 3, dataFile })

/** What a kill -9 right now would leave: a copy of the file, loaded by a new server. */
async function restartFromCopy(file: string) {
  const copy = `${file}.${Date.now()}.copy`
  await copyFile(file, copy)
  return start(copy)
}

it('stores a key minted through /__sandbox/api-keys before answering 201', async () => {
  const file = await tempDataFile('cts-admin-')
  const server = await start(file)
  const minted = await fetch(`${server.url}/__sandbox/api-keys`, {
    method: 'POST',
    body: JSON.stringify({ account_name: 'Stored' }),
  })
  expect(minted.status).toBe(201)
  const { api_key } = await minted.json()

  const again = await restartFromCopy(file)
  const created = await fetch(`${again.url}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${api_key}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
  })
  expect(created.status).toBe(201)
})

it('stores a reset through /__sandbox/reset before answering 200', async () => {
  const file = await tempDataFile('cts-admin-')
  const server = await start(file)
  const created = await fetch(`${server.url}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name: 'Gone', email: 'gone@example.com' }),
  })
  const { id } = await created.json()
  expect((await restartFromCopy(file)).sandbox.customers.get(id)).toBeDefined()

  const reset = await fetch(`${server.url}/__sandbox/reset`, { method: 'POST' })
  expect(reset.status).toBe(200)
  const again = await restartFromCopy(file)
  expect(again.sandbox.customers.get(id)).toBeUndefined()
  expect(again.sandbox.customers.count()).toBe(server.sandbox.customers.count())
})
