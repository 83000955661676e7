// Runs once: every server here names its own store.
import { expect, it, vi } from 'vitest'
import { commandStats, startRedis } from '../_redis.ts'
import {
  createNamed,
  customerNames,
  postJson,
  startServer,
} from '../_servers.ts'

// A replica on Redis stores a whole state without records (a compaction)
// every so many admin changes: what its copy holds already, in fewer
// entries. Another replica's write often lands first, and Redis refuses
// it. A refused whole state had come to mark the replica as behind (right
// for a reset, which its copy keeps though Redis never stored it): after
// each outrun compaction, the replica's next request put back the whole
// state from Redis and loaded every account again, for nothing.

// @note A compaction every second admin change, not every thousandth.
vi.mock('../../src/model/store.ts', async (original) => ({
  ...(await original<typeof import('../../src/model/store.ts')>()),
  MAX_CHANGES_BETWEEN_STATES: 2,
}))

// @note Runs `meanwhile` just before the next whole state is sent to
// Redis, then sends it: another replica's write outruns it for sure.
let meanwhile: (() => Promise<unknown>) | undefined
let outrun: (answer: unknown) => void = () => {}
vi.mock('@redis/client', async (original) => {
  const { aroundScripts } = await import('../_around-scripts.ts')
  return aroundScripts(await original(), async (send, [, options]) => {
    const run = meanwhile
    if (!run || !options.arguments[1]?.startsWith('{"state":')) return send()
    meanwhile = undefined
    await run()
    const answer = await send().catch((error: Error) => error)
    outrun(answer)
    if (answer instanceof Error) throw answer
    return answer
  })
})

const sum = (calls: Record<string, number>): number =>
  Object.values(calls).reduce((total, n) => total + n, 0)

/** How many commands Redis ran while `work` ran: every replica's, the read of the count once. */
const commandsOf = async (url: string, work: () => Promise<unknown>) => {
  const before = sum(await commandStats(url))
  await work()
  return sum(await commandStats(url)) - before
}

it('answers the next request after an outrun compaction without loading the whole state again', async () => {
  const redis = await startRedis()
  const options = {
    seed: 1,
    customersPerAccount: 3,
    store: { url: redis.url, namespace: 'outrun-compaction' },
  }
  const compacting = await startServer(options)
  const other = await startServer(options)

  // What one create costs this replica, its account loaded.
  expect((await createNamed(compacting.url, 'Warm')).status).toBe(201)
  const create = async (name: string) =>
    expect((await createNamed(compacting.url, name)).status).toBe(201)
  const usual = await commandsOf(redis.url, () => create('Usual'))

  // Two admin changes, and the compaction that follows the second is
  // outrun by an admin change of the other replica (a create goes to its
  // account's own list, which a compaction does not wait for).
  const answered = new Promise((resolve) => (outrun = resolve))
  meanwhile = async () => {
    const moved = await postJson(other.url, '/__sandbox/clock', {
      advance_seconds: 1,
    })
    expect(moved.status).toBe(200)
  }
  for (let n = 0; n < 2; n++) {
    const moved = await postJson(compacting.url, '/__sandbox/clock', {
      advance_seconds: 1,
    })
    expect(moved.status).toBe(200)
  }
  // Refused: -1 - the log's length (another replica wrote first).
  expect(await answered).toBeLessThan(0)

  // The next create costs what a create costs, with the other replica's
  // write read on the way; every record is there, a create of the other
  // replica's since (to the same account's list) too.
  const next = await commandsOf(redis.url, () => create('Next'))
  expect(next).toBeLessThanOrEqual(usual)
  expect((await createNamed(other.url, 'Outrunner')).status).toBe(201)
  const names = await customerNames(compacting.url)
  for (const name of ['Warm', 'Usual', 'Outrunner', 'Next'])
    expect(names).toContain(name)
  expect((await customerNames(other.url)).toSorted()).toEqual(names.toSorted())
}, 30_000)
