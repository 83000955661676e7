import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import {
  createNamed,
  customerNames,
  runCli,
  startCli,
  tempFolder,
  writeSession,
} from '../_servers.ts'

// `--store redis://… --from session.json` on a Redis that already held the
// sandbox went on with what Redis held and dropped the session without a
// word, where the same beside a data file says so; and neither the banner
// nor the JSON `listening` line said that the data was in Redis at all.

it('goes on with the sandbox a Redis store holds, and says on stderr that --from was not used', async () => {
  const redis = await startRedis()
  const session = await writeSession(await tempFolder('cts-from-'))
  const args = [
    '--port',
    '0',
    '--quiet',
    '--store',
    redis.url,
    '--from',
    session,
  ]

  const first = await startCli(args)
  expect(await customerNames(first.url)).toEqual(['Session'])
  expect(first.stderr()).toBe('')
  expect((await createNamed(first.url, 'Since')).status).toBe(201)
  expect(await first.stop()).toBe(0)

  const again = await startCli(args)
  expect(await customerNames(again.url)).toEqual(['Session', 'Since'])
  const lines = again.stderr().trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toContain('--from was not used')
  expect(lines[0]).toContain(
    `the store ${redis.url} already holds this sandbox`,
  )
  expect(lines[0]).toContain('another namespace')
})

it('names the Redis store, without its password, in the banner and the listening line', async () => {
  const redis = await startRedis()
  const url = redis.url.replace('redis://', 'redis://default:unused@')
  const banner = runCli(['--port', '0', '--store', url])
  const [data] = await banner.waitFor(/^\s*Data\s.*$/m)
  expect(data).toContain(
    `(saved to ${redis.url.replace('redis://', 'redis://default:***@')})`,
  )
  expect(banner.stdout()).not.toContain('unused')
  expect(await banner.stop()).toBe(0)

  const json = runCli(['--port', '0', '--log-format', 'json', '--store', url])
  const listening = JSON.parse(
    (await json.waitFor(/^\{.*"event":"listening".*\}$/m))[0],
  ) as Record<string, unknown>
  expect(listening).toMatchObject({
    data_file: null,
    store: redis.url.replace('redis://', 'redis://default:***@'),
    loaded_from_file: true,
  })
})
