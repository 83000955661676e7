// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import {
  createNamed,
  customerNames,
  runCli,
  startCli,
  startServer,
} from '../_servers.ts'

// A replica started with other options than its fleet's joined without a
// word: with another --unique-email, --rate-limit or --limits it decided
// the same call otherwise than the replicas beside it, and with another
// --seed or --customers it took the stored data as if it had been asked
// to. A replica whose rules differ now refuses to start, naming both
// values; options that only shape the seeded data are said unused.

// @note Each test starts several CLIs in turn: seconds on a busy machine.
it('refuses to start a replica whose rules differ from its fleet, naming both values, while the fleet serves on', async () => {
  const redis = await startRedis()
  const founder = await startCli([
    '--port',
    '0',
    '--quiet',
    '--store',
    redis.url,
    '--customers',
    '0',
    '--unique-email',
  ])
  expect((await createNamed(founder.url, 'Ada')).status).toBe(201)

  const other = runCli([
    '--port',
    '0',
    '--quiet',
    '--store',
    redis.url,
    '--rate-limit',
    '10/m',
  ])
  expect(await other.exited).toBe(1)
  const lines = other.stderr().trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toContain(`the store ${redis.url}`)
  expect(lines[0]).toContain(
    '--unique-email is true in its fleet and false here',
  )
  expect(lines[0]).toContain('--rate-limit is off in its fleet and 10/60s here')
  expect(lines[0]).toContain('{cts}:options')
  expect(other.stdout()).toBe('')

  await expect(
    startServer({
      store: redis.url,
      customersPerAccount: 0,
      uniqueEmail: true,
      maxScopes: 3,
    }),
  ).rejects.toThrow(/the maxScopes option is 20 in its fleet and 3 here/)

  const same = await startCli([
    '--port',
    '0',
    '--quiet',
    '--store',
    redis.url,
    '--customers',
    '0',
    '--unique-email',
  ])
  expect(same.stderr()).toBe('')
  expect(await customerNames(same.url)).toEqual(['Ada'])
  expect((await createNamed(founder.url, 'Grace')).status).toBe(201)
}, 30_000)

it('joins with the same rules and says on stderr which seed options were not used', async () => {
  const redis = await startRedis()
  const args = ['--port', '0', '--quiet', '--store', redis.url]
  const founder = await startCli([...args, '--seed', '3', '--customers', '2'])
  const seeded = await customerNames(founder.url)
  expect(seeded.length).toBeGreaterThan(0)

  const joined = await startCli([...args, '--seed', '9', '--customers', '5'])
  expect(await customerNames(joined.url)).toEqual(seeded)
  const lines = joined.stderr().trim().split('\n')
  expect(lines).toHaveLength(2)
  expect(lines[0]).toContain('--seed 9 was not used')
  expect(lines[0]).toContain(
    `the store ${redis.url} already holds this sandbox, seeded with --seed 3`,
  )
  expect(lines[1]).toContain('--customers 5 was not used')
  expect(lines[1]).toContain('seeded with --customers 2')

  const again = await startCli([...args, '--seed', '3', '--customers', '2'])
  expect(again.stderr()).toBe('')

  const server = await startServer({ store: redis.url, seed: 4 })
  expect(server.unusedOptions).toEqual([
    { option: 'seed', fleet: 3, own: 4 },
    { option: 'customersPerAccount', fleet: 2, own: 25 },
  ])
}, 30_000)
