// Runs once: every server here names its own store.
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { createFiller, startCli, startServer, tempFolder } from '../_servers.ts'

// As a snapshot did (27-snapshot-keeps-a-record-no-call-was-answered-for),
// GET /__sandbox/state and GET /__sandbox/export showed the records of
// creates whose writes were under way. A create that another replica's
// write outran is taken back and made again under another id, and one that
// a full disk refused is taken back and answered 503: a reader saw a
// customer no call was answered 201 for, which then vanished. They now
// show a record only once its write is stored, and the state's accounts
// count the records it lists (they counted those it then dropped).

/**
 * Creates customers on each of `writers` (one loop per entry) while it
 * reads the state and the export of `reader` again and again; then, once
 * every create is answered, the customers each read showed that no create
 * was answered 201 for, and how many creates were refused.
 */
async function unansweredShown(writers: string[], reader: string) {
  const answered = new Set<string>()
  let refused = 0
  const stop = new AbortController()
  let n = 0
  const writing = writers.map(async (url) => {
    while (!stop.signal.aborted) {
      const response = await createFiller(url, n++)
      const { id } = (await response.json()) as { id?: string }
      if (response.status === 201) answered.add(id!)
      else refused++
    }
  })
  const shown: { read: string; ids: string[] }[] = []
  const miscounted: string[] = []
  for (let read = 0; read < 20; read++) {
    await sleep(15)
    const [state, exported] = await Promise.all([
      fetch(`${reader}/__sandbox/state`),
      fetch(`${reader}/__sandbox/export`),
    ])
    expect(state.status).toBe(200)
    expect(exported.status).toBe(200)
    const { customers, accounts } = (await state.json()) as {
      customers: { id: string }[]
      accounts: { customer_count: number }[]
    }
    // The accounts count what the state lists, not a record it dropped.
    const counted = accounts.reduce((sum, a) => sum + a.customer_count, 0)
    if (counted !== customers.length)
      miscounted.push(
        `state ${read}: ${counted} counted, ${customers.length} listed`,
      )
    const { data } = (await exported.json()) as {
      data: { customers: { id: string }[] }
    }
    shown.push(
      { read: `state ${read}`, ids: customers.map(({ id }) => id) },
      { read: `export ${read}`, ids: data.customers.map(({ id }) => id) },
    )
  }
  stop.abort()
  await Promise.all(writing)
  expect(answered.size).toBeGreaterThan(0)
  const unanswered = shown.flatMap(({ read, ids }) =>
    ids.filter((id) => !answered.has(id)).map((id) => `${read}: ${id}`),
  )
  return { unanswered, refused, miscounted }
}

it('shows in state and export only the customers whose creates were answered 201 by a replica of a fleet', async () => {
  const redis = await startRedis()
  const options = {
    seed: 1,
    customersPerAccount: 0,
    store: { url: redis.url, namespace: 'dirty-reads' },
  }
  const a = await startServer(options)
  const b = await startServer(options)
  // Creates on both replicas at once, so that each outruns the other's.
  const writers = [a, a, a, a, b, b, b, b].map(({ url }) => url)
  const { unanswered, miscounted } = await unansweredShown(writers, a.url)
  expect(unanswered).toEqual([])
  expect(miscounted).toEqual([])
}, 60_000)

it('shows in state and export no customer whose create a full disk refused', async () => {
  const folder = await tempFolder('cts-full-')
  // A full disk without root: past `ulimit -f`, every write fails (EFBIG).
  const server = await startCli(
    [
      '--port',
      '0',
      '--quiet',
      '--customers',
      '0',
      '--data-file',
      join(folder, 'data.json'),
    ],
    { fileSizeLimitKb: 48 },
  )
  const writers = Array.from({ length: 8 }, () => server.url)
  const { unanswered, refused, miscounted } = await unansweredShown(
    writers,
    server.url,
  )
  expect(refused).toBeGreaterThan(0)
  expect(unanswered).toEqual([])
  expect(miscounted).toEqual([])
}, 60_000)
