// The suite's servers keep their state in the store SANDBOX_TEST_STORE names.
import { readFile } from 'node:fs/promises'
import { createClient } from '@redis/client'
import { expect, inject, it } from 'vitest'
import { createNamed, startServer, storeUnderTest } from './_servers.ts'

// @note `npm run test:stores` runs the server tests again on the file and
// the Redis store; this test fails there if they quietly ran on memory.
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
    const client = createClient({ url: store.url }).on('error', () => {})
    await client.connect()
    const log = await client.lRange(`${store.namespace}:{sandbox}:log`, 0, -1)
    client.destroy()
    expect(log.join('\n')).toContain('Stored@example.com')
  }
})
