// Runs once: every server here names its own store.
import { createClient } from '@redis/client'
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { createNamed, runCli, startServer } from '../_servers.ts'

// What went wrong as a replica opened its Redis store was said in the
// client's words alone: a database that is no number printed "Invalid
// pathname" without the URL, a refused password read as an unreachable
// Redis (also in health, when the password changed under a running
// replica), and a key of the namespace holding a string where the sandbox
// keeps a number failed the start with a raw Lua error. Each is now one
// line naming the URL, or the key, and what is wrong.

/** Runs the CLI on `url` and gives its exit code and its one line of stderr. */
async function refusal(
  url: string,
): Promise<{ code: number | string; line: string }> {
  const cli = runCli(['--port', '0', '--quiet', '--store', url])
  const code = await cli.exited
  const lines = cli.stderr().trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).not.toMatch(/^\s+at /m)
  return { code, line: lines[0]! }
}

it('names the URL and says that its database must be a number', async () => {
  const { code, line } = await refusal('redis://:secret@127.0.0.1:6379/abc')
  expect(code).toBe(1)
  expect(line).toContain('redis://:***@127.0.0.1:6379/abc')
  expect(line).toContain('database "abc"')
  expect(line).toContain('a Redis database is a number')
  expect(line).not.toContain('secret')

  const port = await refusal('redis://:secret@127.0.0.1:port/0')
  expect(port.code).toBe(1)
  expect(port.line).toContain('redis://:***@127.0.0.1:port/0 is not a URL')
  expect(port.line).not.toContain('secret')
}, 30_000)

it('says that Redis refused the password or asks for one, not that it is unreachable', async () => {
  const redis = await startRedis()
  await redis.user('app', 'right', ['~*', '&*', '+@all'])
  const client = createClient({ url: redis.url }).on('error', () => {})
  await client.connect()
  await client.configSet('requirepass', 'sekret')
  client.destroy()
  const at = redis.url.replace('redis://', '')

  for (const url of [`redis://:wrong@${at}`, `redis://app:wrong@${at}`]) {
    const { code, line } = await refusal(url)
    expect(code).toBe(1)
    expect(line).toContain(
      `store at ${url.replace(':wrong@', ':***@')} refused its user and password (WRONGPASS)`,
    )
    expect(line).not.toContain('reach')
  }
  const { code, line } = await refusal(redis.url)
  expect(code).toBe(1)
  expect(line).toContain(
    `store at ${redis.url} asks for a password, and the URL gives none (NOAUTH)`,
  )
}, 30_000)

it('says in health that Redis refused the password once it changed under a running replica, and recovers', async () => {
  const redis = await startRedis()
  const admin = createClient({ url: redis.url }).on('error', () => {})
  await admin.connect()
  await admin.configSet('requirepass', 'first')
  const url = redis.url.replace('redis://', 'redis://:first@')
  const server = await startServer({
    seed: 1,
    customersPerAccount: 0,
    store: { url, namespace: 'rotated' },
  })
  expect((await createNamed(server.url, 'Before')).status).toBe(201)

  await admin.configSet('requirepass', 'second')
  // The replica's connection stays signed in until it connects again.
  await admin.sendCommand(['CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes'])
  await expect
    .poll(async () => (await fetch(`${server.url}/__sandbox/health`)).json(), {
      timeout: 5000,
    })
    .toMatchObject({
      status: 'degraded',
      storage: {
        code: 'REDIS_WRONGPASS',
        message: expect.stringContaining("refused this replica's password"),
      },
    })

  const refused = await createNamed(server.url, 'During')
  expect(refused.status).toBe(503)
  expect(((await refused.json()) as { detail: string }).detail).toContain(
    '(REDIS_WRONGPASS)',
  )

  await admin.configSet('requirepass', 'first')
  admin.destroy()
  await expect
    .poll(async () => (await fetch(`${server.url}/__sandbox/health`)).status, {
      timeout: 5000,
    })
    .toBe(200)
  expect((await createNamed(server.url, 'After')).status).toBe(201)
}, 30_000)

it('names a key of the namespace that holds what the sandbox never keeps there', async () => {
  const redis = await startRedis()
  const client = createClient({ url: redis.url }).on('error', () => {})
  await client.connect()

  await client.set('{cts}:last-state', 'abc')
  const planted = await refusal(redis.url)
  expect(planted.code).toBe(1)
  expect(planted.line).toContain(
    'its key {cts}:last-state holds the string "abc", where this sandbox keeps a whole number',
  )

  await client.del('{cts}:last-state')
  await client.rPush('{cts}:log-base', 'x')
  const typed = await refusal(redis.url)
  expect(typed.code).toBe(1)
  expect(typed.line).toContain('its key {cts}:log-base holds a list')
  client.destroy()
}, 30_000)
