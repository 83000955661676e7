// Runs once: every server here names its own store.
import { appendFile, copyFile, readFile } from 'node:fs/promises'
import { createClient } from '@redis/client'
import { expect, it } from 'vitest'
import { readDataFile } from '../../src/model/data-file.ts'
import { startRedis } from '../_redis.ts'
import { startServer, tempDataFile } from '../_servers.ts'

// Every change through /__sandbox/ stored the whole state: the data file
// was rewritten whole (100k records for a clock move) and each Redis replica
// appended the whole data set as one log entry, which every other replica
// then loaded in place of its own. An admin change now stores what it
// changed: one short line of the data file, one small entry of the log.

// Large enough that a whole state is hundreds of kilobytes.
const CUSTOMERS = 2000

const admin = (url: string, path: string, body?: unknown, method = 'POST') =>
  fetch(`${url}/__sandbox/${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })

const clockOf = async (url: string): Promise<string> =>
  (
    (await (await admin(url, 'clock', undefined, 'GET')).json()) as {
      now: string
    }
  ).now

/** What a kill -9 right now would leave: a copy of the file, loaded by a new server. */
async function restartFromCopy(file: string) {
  const copy = `${file}.${Date.now()}.copy`
  await copyFile(file, copy)
  return startServer({ customersPerAccount: CUSTOMERS, dataFile: copy })
}

/**
 * Runs `change` and returns its answer and what it appended to `file`: the
 * file's bytes before it must stay as they were.
 */
async function appendedBy(file: string, change: () => Promise<Response>) {
  const before = await readFile(file)
  const response = await change()
  expect(response.ok).toBe(true)
  const after = await readFile(file)
  expect(after.length).toBeGreaterThanOrEqual(before.length)
  expect(after.subarray(0, before.length).equals(before)).toBe(true)
  return {
    response,
    before,
    added: after.subarray(before.length).toString('utf8'),
  }
}

it('moves the clock by appending one short line to a data file of thousands of customers, which a restart replays', async () => {
  const file = await tempDataFile('cts-admin-line-')
  const server = await startServer({
    customersPerAccount: CUSTOMERS,
    dataFile: file,
  })
  expect(
    (await admin(server.url, 'clock', { now: '2030-01-01T00:00:00Z' })).status,
  ).toBe(200)

  const { before, added } = await appendedBy(file, () =>
    admin(server.url, 'clock', { advance_seconds: 3600 }),
  )
  expect(before.length).toBeGreaterThan(200_000)
  expect(added.split('\n')).toHaveLength(2)
  expect(added.endsWith('\n')).toBe(true)
  expect(Buffer.byteLength(added)).toBeLessThan(1024)

  const again = await restartFromCopy(file)
  expect(await clockOf(again.url)).toBe('2030-01-01T01:00:00.000Z')
  expect(again.sandbox.customers.count()).toBe(server.sandbox.customers.count())
})

it('stores a new key, a queued scenario and an account clock as one short line each, and a call that changes nothing stored leaves the file alone', async () => {
  const file = await tempDataFile('cts-admin-line-')
  const server = await startServer({
    customersPerAccount: CUSTOMERS,
    dataFile: file,
  })

  const minted = await appendedBy(file, () =>
    admin(server.url, 'api-keys', { account_name: 'Small' }),
  )
  expect(minted.added.split('\n')).toHaveLength(2)
  expect(Buffer.byteLength(minted.added)).toBeLessThan(1024)
  const { api_key: key } = (await minted.response.json()) as {
    api_key: string
  }

  const queued = await appendedBy(file, () =>
    admin(server.url, 'scenarios', {
      operation: 'createCustomer',
      status: 503,
    }),
  )
  expect(Buffer.byteLength(queued.added)).toBeLessThan(1024)

  const ownClock = await appendedBy(file, () =>
    fetch(`${server.url}/__sandbox/account/clock`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ now: '2031-05-05T00:00:00Z' }),
    }),
  )
  expect(Buffer.byteLength(ownClock.added)).toBeLessThan(1024)

  // The journal and in-memory snapshots are no part of the data file.
  for (const change of [
    () => admin(server.url, 'requests', undefined, 'DELETE'),
    () => admin(server.url, 'snapshots', { name: 'before' }),
  ]) {
    expect((await appendedBy(file, change)).added).toBe('')
  }

  const again = await restartFromCopy(file)
  const created = await fetch(`${again.url}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
  })
  // The queued fault came back with the restart, and the key with it.
  expect(created.status).toBe(503)
  const clock = await fetch(`${again.url}/__sandbox/account/clock`, {
    headers: { authorization: `Bearer ${key}` },
  })
  expect(((await clock.json()) as { now: string }).now).toBe(
    '2031-05-05T00:00:00.000Z',
  )
})

it('keeps every key minted while other admin calls ran beside it, each once, across a restart', async () => {
  const file = await tempDataFile('cts-admin-line-')
  const server = await startServer({ customersPerAccount: 2, dataFile: file })
  const answers = await Promise.all(
    Array.from({ length: 6 }, (_, n) => [
      admin(server.url, 'api-keys', { account_name: `Beside ${n}` }),
      admin(server.url, 'clock', { advance_seconds: 60 }),
      admin(server.url, 'latency', { min_ms: 0, max_ms: n }),
    ]).flat(),
  )
  const keys: string[] = []
  for (const answer of answers) {
    expect(answer.ok).toBe(true)
    const body = (await answer.json()) as { api_key?: string }
    if (body.api_key) keys.push(body.api_key)
  }
  expect(keys).toHaveLength(6)

  const again = await restartFromCopy(file)
  expect(again.sandbox.accounts.list()).toHaveLength(
    server.sandbox.accounts.list().length,
  )
  expect(await clockOf(again.url)).toBe(await clockOf(server.url))
  for (const key of keys) {
    const own = await fetch(`${again.url}/__sandbox/account/clock`, {
      headers: { authorization: `Bearer ${key}` },
    })
    expect(own.status).toBe(200)
  }
})

it('starts on an account and key stored twice, by the call that made them and one that ran beside it', async () => {
  const file = await tempDataFile('cts-admin-line-')
  const server = await startServer({ customersPerAccount: 2, dataFile: file })
  const minted = await admin(server.url, 'api-keys', { account_name: 'Twice' })
  const { api_key } = (await minted.json()) as { api_key: string }
  const lines = (await readFile(file, 'utf8')).trimEnd().split('\n')
  const line = lines.at(-1)!
  expect(line).toMatch(/^\{"account":/)
  await appendFile(file, `${line}\n`)

  const again = await restartFromCopy(file)
  expect(again.sandbox.accounts.list()).toHaveLength(
    server.sandbox.accounts.list().length,
  )
  const own = await fetch(`${again.url}/__sandbox/account/clock`, {
    headers: { authorization: `Bearer ${api_key}` },
  })
  expect(own.status).toBe(200)
})

it('drops a clock line that a crash cut short, and refuses a set line of unknown parts or a line of two records other than an account and its key', async () => {
  const file = await tempDataFile('cts-admin-line-')
  const server = await startServer({ customersPerAccount: 2, dataFile: file })
  expect(
    (await admin(server.url, 'clock', { now: '2030-01-01T00:00:00Z' })).status,
  ).toBe(200)
  await server.close()

  // What kill -9 in the middle of the next move leaves.
  await appendFile(file, '{"set":{"clock":{"now":"2031-01-01T00:00:00.000Z"')
  const again = await restartFromCopy(file)
  expect(await clockOf(again.url)).toBe('2030-01-01T00:00:00.000Z')

  for (const line of [
    '{"set":{"seed":7}}',
    '{"set":{}}',
    '{"customer":{"id":"cus_1"},"token":{"id":"tok_1"}}',
    '{"account":{"id":"acct_1"},"customer":{"id":"cus_1"}}',
  ]) {
    const bad = `${file}.bad`
    await copyFile(file, bad)
    await appendFile(bad, `${line}\n`)
    await expect(readDataFile(bad)).rejects.toThrow(/at line \d+ \(/)
  }
})

it('moves the clock of every replica on one Redis with a log entry far smaller than the whole state', async () => {
  const redis = await startRedis()
  const store = { url: redis.url, namespace: 'small-entries' }
  const options = { seed: 1, customersPerAccount: CUSTOMERS, store }
  const a = await startServer(options)
  const b = await startServer(options)

  expect(
    (await admin(a.url, 'clock', { now: '2030-01-01T00:00:00Z' })).status,
  ).toBe(200)
  expect(await clockOf(b.url)).toBe('2030-01-01T00:00:00.000Z')
  expect((await admin(b.url, 'clock', { advance_seconds: 60 })).status).toBe(
    200,
  )
  expect(await clockOf(a.url)).toBe('2030-01-01T00:01:00.000Z')

  const client = createClient({ url: redis.url }).on('error', () => {})
  await client.connect()
  const log = '{small-entries}:log'
  const whole = (await client.lIndex(log, 0))!
  const last = (await client.lIndex(log, -1))!
  // The whole state keeps its customers and tokens apart, in one list per
  // account of its generation, under the account's own hash tag.
  const { gen } = JSON.parse(whole) as { gen: string }
  let records = 0
  for (const account of await client.sMembers(
    `{small-entries}:g:${gen}:accounts`,
  ))
    for (const record of await client.lRange(
      `{small-entries:${account}}:g:${gen}`,
      0,
      -1,
    ))
      records += record.length
  client.destroy()
  expect(whole).toMatch(/^\{"state":/)
  expect(whole.length + records).toBeGreaterThan(200_000)
  expect(last.length).toBeLessThan(1024)

  // A key minted on one replica works on the other, its account with it.
  const minted = await admin(a.url, 'api-keys', { account_name: 'Shared' })
  const { api_key, account_id } = (await minted.json()) as {
    api_key: string
    account_id: string
  }
  expect(b.sandbox.accounts.get(account_id)).toBeUndefined()
  const own = await fetch(`${b.url}/__sandbox/account/clock`, {
    headers: { authorization: `Bearer ${api_key}` },
  })
  expect(own.status).toBe(200)
  expect(b.sandbox.accounts.get(account_id)?.name).toBe('Shared')
})
