// Runs once: every server here names its own store.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { startRedis } from '../_redis.ts'
import {
  postJson,
  startCli,
  startServer,
  tempDataFile,
  tempFolder,
} from '../_servers.ts'

// Under --clock-after-set running, a durable store kept a clock that was set
// as the time it was set to, and no word of when: after kill -9 a restart on
// the data file put it back there, behind the created_at of records answered
// 201 since (a token then lived longer than its expires_in); a replica of a
// Redis store, and one started after another was killed, ran it on from the
// moment it read it, behind the replica that set it. A running clock is now
// stored with the host's time at which it had its time (`host_now`), and
// whoever loads it runs it on by the host's time since: it reads what it
// would read had it never stopped, on every replica.

const KEY = 'sk_test_DemoKeyForTheSandbox0001'
const OTHER_KEY = 'sk_test_DemoKeyForTheSandbox0002'
const SET = Date.parse('2030-01-01T00:00:00.000Z')
const OTHER_SET = Date.parse('2040-06-01T12:00:00.000Z')
// @note A stored clock is read beside the host's time, each to the ms:
// one loaded from them may be a ms ahead, never behind.
const SLACK_MS = 5
/** The CLI's flags besides the store's. */
const RUNNING = ['--port', '0', '--quiet', '--clock-after-set', 'running']

/** A clock move and the host's times around it. */
interface Move {
  to: number
  before: number
  after: number
}

const setClock = async (
  url: string,
  to: number,
  key?: string,
): Promise<Move> => {
  const before = Date.now()
  const response = await postJson(
    url,
    key ? '/__sandbox/account/clock' : '/__sandbox/clock',
    { now: new Date(to).toISOString() },
    key,
  )
  const after = Date.now()
  expect(response.status).toBe(200)
  return { to, before, after }
}

/** Reads a clock and expects it where a clock set by `move` runs to. */
const expectRunning = async (
  url: string,
  move: Move,
  key?: string,
): Promise<number> => {
  const before = Date.now()
  const response = await fetch(
    `${url}${key ? '/__sandbox/account/clock' : '/__sandbox/clock'}`,
    { headers: key ? { authorization: `Bearer ${key}` } : {} },
  )
  const after = Date.now()
  expect(response.status).toBe(200)
  const clock = (await response.json()) as { now: string; frozen: boolean }
  expect(clock.frozen).toBe(false)
  const now = Date.parse(clock.now)
  // It ran for as long as the host's time did, between the two requests.
  expect(now).toBeGreaterThanOrEqual(move.to + (before - move.after))
  expect(now).toBeLessThanOrEqual(move.to + (after - move.before) + SLACK_MS)
  return now
}

/** Mints a token with `key` and gives its `created_at`. */
const createdAt = async (url: string, key: string): Promise<number> => {
  const response = await postJson(
    url,
    '/v2/tokens',
    { scopes: ['customers:write'], expires_in: 60 },
    key,
  )
  expect(response.status).toBe(201)
  return Date.parse(
    ((await response.json()) as { created_at: string }).created_at,
  )
}

it(
  'runs a running clock on from where it was after kill -9 on the data file, and after a clean stop',
  { timeout: 60_000 },
  async () => {
    const file = await tempDataFile('cts-running-clock-')
    const args = [...RUNNING, '--data-file', file]
    const first = await startCli(args)
    const move = await setClock(first.url, SET)
    const accountMove = await setClock(first.url, OTHER_SET, OTHER_KEY)
    await sleep(1500)
    const created = await createdAt(first.url, KEY)
    const otherCreated = await createdAt(first.url, OTHER_KEY)
    expect(created).toBeGreaterThanOrEqual(SET + 1500)
    expect(otherCreated).toBeGreaterThanOrEqual(OTHER_SET + 1500)
    first.child.kill('SIGKILL')
    expect(await first.exited).toBe('SIGKILL')

    const restarted = await startCli(args)
    // The clock read 2030-01-01T00:00:00.0xxZ here, behind the token.
    expect(await expectRunning(restarted.url, move)).toBeGreaterThan(created)
    expect(
      await expectRunning(restarted.url, accountMove, OTHER_KEY),
    ).toBeGreaterThan(otherCreated)
    expect(await restarted.stop()).toBe(0)

    // A clean stop saves the clock as it is: the time the server was down
    // passes on it too, as on the host's.
    await sleep(500)
    const again = await startCli(args)
    await expectRunning(again.url, move)
    await expectRunning(again.url, accountMove, OTHER_KEY)
    expect(await again.stop()).toBe(0)
  },
)

it(
  'shows a running clock at one time on every replica of a Redis store, one started after another was killed too',
  { timeout: 60_000 },
  async () => {
    const redis = await startRedis()
    const config = join(await tempFolder('cts-running-clock-'), 'store.json')
    await writeFile(
      config,
      JSON.stringify({ store: { url: redis.url, namespace: 'running' } }),
    )
    const args = [...RUNNING, '--config', config]
    const first = await startCli(args)
    const second = await startCli(args)
    const move = await setClock(first.url, SET)
    const accountMove = await setClock(first.url, OTHER_SET, OTHER_KEY)
    await sleep(1500)
    const created = await createdAt(first.url, KEY)
    const otherCreated = await createdAt(first.url, OTHER_KEY)

    // The second replica read 2030-01-01T00:00:00.0xxZ here: it ran the
    // clock on from when it read the move, not from when it was made.
    expect(await expectRunning(second.url, move)).toBeGreaterThan(created)
    expect(
      await expectRunning(second.url, accountMove, OTHER_KEY),
    ).toBeGreaterThan(otherCreated)

    first.child.kill('SIGKILL')
    expect(await first.exited).toBe('SIGKILL')
    await sleep(500)
    const third = await startCli(args)
    expect(await expectRunning(third.url, move)).toBeGreaterThan(created)
    expect(
      await expectRunning(third.url, accountMove, OTHER_KEY),
    ).toBeGreaterThan(otherCreated)
    await expectRunning(second.url, move)
    for (const replica of [second, third]) expect(await replica.stop()).toBe(0)
  },
)

it('loads a data file of an earlier release, without host_now, running its clock on from its saved time, and refuses a host_now that is no time', async () => {
  const source = createSandbox({ clockAfterSet: 'running' })
  await source.ready
  source.clock.set(SET)
  const data = source.dump()
  expect(data.clock).toMatchObject({ frozen: false, moved: true })
  expect(data.clock).not.toHaveProperty('host_now')
  const file = await tempDataFile('cts-running-clock-')
  await writeFile(file, JSON.stringify(data))
  await sleep(1000)
  // Run on from the time it was loaded at: the second since it was saved
  // is not on it.
  const before = Date.now()
  const server = await startServer({ clockAfterSet: 'running', dataFile: file })
  const move = { to: Date.parse(data.clock.now), before, after: Date.now() }
  await expectRunning(server.url, move)
  await server.close()

  const refused = await tempDataFile('cts-running-clock-')
  const bad = { ...data, clock: { ...data.clock, host_now: 'soon' } }
  await writeFile(refused, JSON.stringify(bad))
  await expect(
    startServer({ clockAfterSet: 'running', dataFile: refused }),
  ).rejects.toThrow(/clock\.host_now: Invalid ISO datetime/)
})
