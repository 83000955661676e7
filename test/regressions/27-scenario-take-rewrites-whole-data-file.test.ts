// Runs once: every server here names its own store.
import { appendFile, copyFile, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { readDataFile } from '../../src/model/data-file.ts'
import {
  createNamed,
  runCli,
  startServer,
  tempDataFile,
  tempFolder,
} from '../_servers.ts'

// A queued scenario that an API call took was stored as a whole snapshot of
// the data file: with thousands of records, every faulted call rewrote the
// file. A take is now one short line, which a restart (kill -9 included)
// replays: the taken scenarios stay taken, the others stay queued.

// Large enough that a whole state is hundreds of kilobytes.
const CUSTOMERS = 2000

const json = { 'content-type': 'application/json' }

const queue = (url: string, body: unknown, key?: string) =>
  fetch(`${url}/__sandbox/${key ? 'account/' : ''}scenarios`, {
    method: 'POST',
    headers: { ...json, ...(key && { authorization: `Bearer ${key}` }) },
    body: JSON.stringify(body),
  })

const queued = async (url: string, key?: string): Promise<unknown[]> =>
  (
    (await (
      await fetch(`${url}/__sandbox/${key ? 'account/' : ''}scenarios`, {
        headers: key ? { authorization: `Bearer ${key}` } : {},
      })
    ).json()) as { scenarios: unknown[] }
  ).scenarios

/**
 * Runs `call` and returns its status and what it appended to `file`: the
 * file is the same file (no rename), and its bytes before stay as they were.
 */
async function appendedBy(file: string, call: () => Promise<Response>) {
  const before = await readFile(file)
  const { ino } = await stat(file)
  const { status } = await call()
  const after = await readFile(file)
  expect((await stat(file)).ino).toBe(ino)
  expect(after.subarray(0, before.length).equals(before)).toBe(true)
  return { status, before, added: after.subarray(before.length).toString() }
}

it('stores each queued scenario an API call takes as one short line of a data file of thousands of customers, which a restart replays', async () => {
  const file = await tempDataFile('cts-take-line-')
  const server = await startServer({
    customersPerAccount: CUSTOMERS,
    dataFile: file,
  })
  const { url } = server
  for (const body of [
    { operation: 'createCustomer', status: 503, times: 2 },
    { operation: 'createToken', status: 500 },
    { operation: '*', status: 429 },
    { operation: 'createCustomer', status: 502 },
  ])
    expect((await queue(url, body)).status).toBe(201)
  expect(
    (
      await queue(
        url,
        { operation: 'createCustomer', status: 409 },
        DEMO_KEY_ONE,
      )
    ).status,
  ).toBe(201)

  // The account's own queue first, then the sandbox's, oldest first.
  for (const status of [409, 503, 503, 429]) {
    const take = await appendedBy(file, () => createNamed(url, 'Faulted'))
    expect(take.status).toBe(status)
    expect(take.before.length).toBeGreaterThan(200_000)
    expect(take.added.split('\n')).toHaveLength(2)
    expect(take.added.endsWith('\n')).toBe(true)
    expect(Buffer.byteLength(take.added)).toBeLessThan(1024)
  }
  const left = await queued(url)
  expect(left).toHaveLength(2)
  expect(await queued(url, DEMO_KEY_ONE)).toEqual([])

  // What a kill -9 right now would leave: a copy of the file.
  const copy = `${file}.copy`
  await copyFile(file, copy)
  const again = await startServer({
    customersPerAccount: CUSTOMERS,
    dataFile: copy,
  })
  expect(await queued(again.url)).toEqual(left)
  expect(await queued(again.url, DEMO_KEY_ONE)).toEqual([])
  expect((await createNamed(again.url, 'Faulted')).status).toBe(502)
  expect((await createNamed(again.url, 'Fine')).status).toBe(201)

  for (const line of [
    '{"taken":{"account_id":null}}',
    '{"taken":{"account_id":7,"operation":"createCustomer"}}',
  ]) {
    const bad = `${file}.bad`
    await copyFile(copy, bad)
    await appendFile(bad, `${line}\n`)
    await expect(readDataFile(bad)).rejects.toThrow(/at line \d+ \("taken"/)
  }
}, 30_000) // two starts on thousands of customers, on a busy machine

it('keeps taken scenarios taken after a kill -9 of the server', async () => {
  const folder = await tempFolder('cts-take-kill-')
  const file = join(folder, 'data.json')
  const args = ['--port', '0', '--quiet', '--customers', '50']
  const start = async () => {
    const cli = runCli([...args, '--data-file', file])
    const [, url] = await cli.waitFor(/(http:\/\/[^\s"]+)[\s"]/)
    return { ...cli, url: url! }
  }
  const first = await start()
  for (const status of [503, 500, 502])
    expect(
      (await queue(first.url, { operation: 'createCustomer', status })).status,
    ).toBe(201)
  expect((await createNamed(first.url, 'One')).status).toBe(503)
  expect((await createNamed(first.url, 'Two')).status).toBe(500)
  expect(await first.stop('SIGKILL')).toBe('SIGKILL')

  const second = await start()
  const left = (await queued(second.url)) as { status: number }[]
  expect(left.map((s) => s.status)).toEqual([502])
  expect((await createNamed(second.url, 'Three')).status).toBe(502)
  expect((await createNamed(second.url, 'Four')).status).toBe(201)
})
