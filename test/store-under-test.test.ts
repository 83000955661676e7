// The suite's servers keep their state in the store SANDBOX_TEST_STORE names.
import { readFile } from 'node:fs/promises'
import { createClient } from '@redis/client'
import { expect, inject, it } from 'vitest'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import {
  createNamed,
  startCli,
  startServer,
  storeUnderTest,
} from './_servers.ts'
import { storeFlagsUnderTest } from './_spawn.ts'

/**
 * What the Redis store holds under `namespace`, as one text: its log's
 * entries, and its accounts' lists (each under the account's own tag).
 */
async function redisLog(url: string, namespace: string): Promise<string> {
  const client = createClient({ url }).on('error', () => {})
  await client.connect()
  const texts = await client.lRange(`{${namespace}}:log`, 0, -1)
  for (const list of await client.keys(`{${namespace}:*}:g:*`))
    texts.push(...(await client.lRange(list, 0, -1)))
  client.destroy()
  return texts.join('\n')
}

// @note `vitest run` runs the server and CLI tests again on the file and the
// Redis store (projects file and redis); these tests fail there if they
// quietly ran on memory.
it('starts the servers of the suite on the store SANDBOX_TEST_STORE names, memory unless told', async () => {
  const kind = process.env.SANDBOX_TEST_STORE ?? 'memory'
  const options = storeUnderTest({})
  const server = await startServer(options)
  expect((await createNamed(server.url, 'Stored')).status).toBe(201)
  if (kind === 'memory') {
    expect(options).toEqual({})
  } else if (kind === 'file') {
    const text = await readFile(options.dataFile!, 'utf8')
    expect(text).toContain('Stored@example.com')
  } else {
    const store = options.store as { url: string; namespace: string }
    expect(store.url).toBe(inject('sharedRedisUrl'))
    expect(await redisLog(store.url, store.namespace)).toContain(
      'Stored@example.com',
    )
  }
})

it("starts the spawned CLI's server on the store SANDBOX_TEST_STORE names, memory unless told", async () => {
  const kind = process.env.SANDBOX_TEST_STORE ?? 'memory'
  const cli = await startCli(['--port', '0', '--quiet'])
  expect((await createNamed(cli.url, 'Spawned')).status).toBe(201)
  const [flag, path] = cli.storeFlags
  if (kind === 'memory') {
    expect(cli.storeFlags).toEqual([])
  } else if (kind === 'file') {
    expect(flag).toBe('--data-file')
    expect(await readFile(path!, 'utf8')).toContain('Spawned@example.com')
  } else {
    expect(flag).toBe('--config')
    const { store } = JSON.parse(await readFile(path!, 'utf8'))
    expect(store.url).toBe(inject('sharedRedisUrl'))
    expect(await redisLog(store.url, store.namespace)).toContain(
      'Spawned@example.com',
    )
  }
  expect(await cli.stop()).toBe(0)
})

it.each([
  [['verify', '--target', 'http://127.0.0.1:1', '--key', DEMO_KEY_ONE]],
  [['record', '--target', 'http://127.0.0.1:1', '--port', '0']],
  [['--port', '0', '--help']],
  [['-v']],
  [['--port', '0', '--data-file', 'data.json']],
  [['--port', '0', '--store=redis://127.0.0.1:1/0']],
  [['--config', 'sandbox.config.json', '--port', '0']],
])(
  'leaves the store of the CLI to %j, which serves nothing or names its own',
  (args) => {
    expect(storeFlagsUnderTest(args)).toEqual([])
  },
)

it('leaves the store of the CLI to SANDBOX_DATA_FILE or SANDBOX_STORE in its environment', () => {
  const args = ['--port', '0']
  expect(storeFlagsUnderTest(args, { SANDBOX_DATA_FILE: 'data.json' })).toEqual(
    [],
  )
  expect(
    storeFlagsUnderTest(args, { SANDBOX_STORE: 'redis://127.0.0.1:1/0' }),
  ).toEqual([])
})
