// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import {
  createNamed,
  customerNames,
  emptyFleet,
  postJson,
} from '../_servers.ts'

// Found by an outside tester: with the key naming the current generation
// deleted by hand (`DEL {ns}:gen`), the next reset stored its state and
// never dropped the generation it left, which its script read from that
// key: every list, index and count of it stayed in Redis for good, with no
// expiry. The replica now names the generation it follows, and the script
// drops that one when the key is gone.

it('drops the generation a reset left though its key was deleted by hand', async () => {
  const { start, client } = await emptyFleet('gen-gone', {
    customersPerAccount: 2,
  })
  const replica = await start()
  expect((await createNamed(replica.url, 'Before')).status).toBe(201)
  const before = await client.get('{gen-gone}:gen')
  expect(before).not.toBeNull()
  const keysOf = async (g: string): Promise<string[]> => [
    ...(await client.keys(`{gen-gone:*}:g:${g}`)),
    ...(await client.keys(`{gen-gone}:g:${g}:*`)),
  ]
  expect(await keysOf(before!)).not.toEqual([])

  expect(await client.del('{gen-gone}:gen')).toBe(1)
  const reset = await postJson(replica.url, '/__sandbox/reset', { seed: 2 })
  expect(reset.status).toBe(200)
  expect(await customerNames(replica.url)).toHaveLength(4)
  const current = await client.get('{gen-gone}:gen')
  expect(current).not.toBeNull()
  expect(current).not.toBe(before)

  for (
    let waited = 0;
    (await keysOf(before!)).length > 0 && waited < 30;
    waited++
  )
    await new Promise((done) => setTimeout(done, 100))
  expect(await keysOf(before!)).toEqual([])
  expect(await keysOf(current!)).not.toEqual([])
}, 15_000)
