// Runs once: every server here names its own store.
import { copyFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import {
  createNamed,
  customerNames,
  startServer,
  tempDataFile,
} from '../_servers.ts'

// POST /__sandbox/reset on Redis forgot the fleet's journal and rate-limit
// counts, but a reset through the JavaScript API of a replica
// (`server.sandbox.reset()`) forgot neither, nor stored the new state: the
// other replicas kept the old data, journal and counts. A restore, through
// either path, kept the fleet's counts, where one server starts its rate
// limits again. Both paths now run the same reset, stored before it settles.

const fleet = async (namespace: string) => {
  const redis = await startRedis()
  const options = {
    seed: 1,
    customersPerAccount: 0,
    rateLimit: { limit: 2, windowSeconds: 60 },
    store: { url: redis.url, namespace },
  }
  return [await startServer(options), await startServer(options)] as const
}

const journal = async (url: string): Promise<unknown[]> =>
  (
    (await (await fetch(`${url}/__sandbox/requests`)).json()) as {
      requests: unknown[]
    }
  ).requests

const admin = (url: string, path: string, body: unknown) =>
  fetch(`${url}/__sandbox/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

it('empties the fleet journal, starts the rate limits again and resets every replica on a reset through the JavaScript API', async () => {
  const [a, b] = await fleet('js-reset')
  expect((await createNamed(a.url, 'One')).status).toBe(201)
  expect((await createNamed(b.url, 'Two')).status).toBe(201)
  expect((await createNamed(a.url, 'Three')).status).toBe(429)
  expect(await journal(b.url)).toHaveLength(3)

  await a.sandbox.reset()
  expect(await journal(b.url)).toEqual([])
  expect(await customerNames(b.url)).toEqual([])
  expect((await createNamed(b.url, 'Again')).status).toBe(201)
  expect(await customerNames(a.url)).toEqual(['Again'])
})

it('starts the fleet rate limits again on a restore through the route and through the JavaScript API, and keeps the journal', async () => {
  const [a, b] = await fleet('restore')
  expect((await admin(a.url, 'snapshots', { name: 'empty' })).status).toBe(201)
  const restores = [
    () => admin(a.url, 'snapshots/restore', { name: 'empty' }),
    () => a.sandbox.restore('empty'),
  ]
  for (const restore of restores) {
    expect((await createNamed(a.url, 'One')).status).toBe(201)
    expect((await createNamed(b.url, 'Two')).status).toBe(201)
    expect((await createNamed(b.url, 'Three')).status).toBe(429)
    const before = await journal(b.url)
    await restore()
    expect(await customerNames(b.url)).toEqual([])
    expect(await journal(b.url)).toEqual(before)
  }
  expect((await createNamed(b.url, 'Again')).status).toBe(201)
})

it('stores a reset through the JavaScript API in the data file before it settles', async () => {
  const file = await tempDataFile('cts-js-reset-')
  const options = { seed: 1, customersPerAccount: 3 }
  const server = await startServer({ ...options, dataFile: file })
  expect((await createNamed(server.url, 'Kept')).status).toBe(201)
  await server.sandbox.reset(7)

  // What a kill -9 right now would leave: a copy of the file.
  const copy = `${file}.copy`
  await copyFile(file, copy)
  const again = await startServer({ ...options, dataFile: copy })
  expect(again.sandbox.seed).toBe(7)
  expect(await customerNames(again.url)).toEqual(
    await customerNames(server.url),
  )
})
