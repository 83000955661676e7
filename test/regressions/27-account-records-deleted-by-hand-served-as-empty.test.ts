// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import {
  createNamed,
  customerNames,
  emptyFleet,
  expectRecordsLost,
} from '../_servers.ts'

// A replica loads an account's customers and tokens from its list in Redis
// when a request first asks for it. A list deleted by hand loaded as an
// empty account: the replica served it from none of its records, and said
// nothing. It now refuses with 503, naming the key, and health says
// degraded; and a reset, which no longer loads the accounts it replaces,
// mends it.

it('refuses to serve an account whose records Redis lost, naming the key, and a reset mends it', async () => {
  const { start, client } = await emptyFleet('lostlist')
  const writer = await start()
  expect((await createNamed(writer.url, 'Kept')).status).toBe(201)
  const reader = await start()
  // The list of the account that made it, under the account's own tag.
  const [list, ...others] = await client.keys(
    '{lostlist:acct_DemoAccount001}:g:*',
  )
  expect(others).toEqual([])
  await client.del(list!)

  const state = await fetch(`${reader.url}/__sandbox/state`)
  expect(state.status).toBe(503)
  expect(state.headers.get('retry-after')).not.toBeNull()
  const problem = (await state.json()) as { code: string; detail: string }
  expect(problem.code).toBe('storage_unavailable')
  expect(problem.detail).toContain('POST /__sandbox/reset')
  await expectRecordsLost(reader.url, list!)

  const reset = await fetch(`${reader.url}/__sandbox/reset`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
  expect(reset.status).toBe(200)
  expect(await customerNames(reader.url)).toEqual([])
  expect(await customerNames(writer.url)).toEqual([])
  expect((await createNamed(reader.url, 'After')).status).toBe(201)
  expect(await customerNames(writer.url)).toEqual(['After'])
  expect((await fetch(`${reader.url}/__sandbox/health`)).status).toBe(200)
})
