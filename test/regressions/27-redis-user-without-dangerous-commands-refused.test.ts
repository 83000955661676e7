// Runs once: every server here names its own store.
import { createClient } from '@redis/client'
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { createNamed, runCli, startServer } from '../_servers.ts'

// A managed Redis often gives an application a user without the commands
// its ACLs class as dangerous (`+@all -@dangerous`). The store asked INFO
// whether Redis was a cluster, and INFO is one of them: the start failed
// with "Cannot reach the Redis store …: NOPERM", though every command the
// store sends was allowed. It now asks CLUSTER INFO, which such a user may
// send, and a Redis that refuses it serves as one node.

it('serves from a Redis whose user may not run the commands ACLs class as dangerous', async () => {
  const redis = await startRedis()
  const url = await redis.user('app', 'pw', [
    // The sandbox's keys only, as the shared-sandbox guide gives it: its
    // own, and its accounts' (each under its own hash tag).
    '~{restricted}:*',
    '~{restricted:*',
    '+@all',
    '-@dangerous',
  ])
  // The user is refused INFO, as it was asked before.
  const user = createClient({ url }).on('error', () => {})
  await user.connect()
  await expect(user.info('cluster')).rejects.toThrow(/NOPERM/)
  user.destroy()
  const store = { url, namespace: 'restricted' }

  const first = await startServer({ seed: 1, store })
  const created = await createNamed(first.url, 'Kept')
  expect(created.status).toBe(201)
  const { id } = (await created.json()) as { id: string }
  const reset = await fetch(`${first.url}/__sandbox/reset`, { method: 'POST' })
  expect(reset.status).toBe(200)
  const again = await createNamed(first.url, 'Later')
  expect(again.status).toBe(201)
  const { id: after } = (await again.json()) as { id: string }
  await first.close()

  // A second replica with the same user reads what the first stored.
  const second = await startServer({ seed: 1, store })
  const state = (await (
    await fetch(`${second.url}/__sandbox/state`)
  ).json()) as { customers: { id: string }[] }
  const ids = state.customers.map((c) => c.id)
  expect(ids).toContain(after)
  expect(ids).not.toContain(id)
}, 30_000)

it('still names a Redis that refuses the user every command', async () => {
  const redis = await startRedis()
  const url = await redis.user('none', 'pw', ['-@all'])
  const cli = runCli(['--port', '0', '--quiet', '--store', url])
  expect(await cli.exited).toBe(1)
  const lines = cli.stderr().trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toContain('redis://none:***@127.0.0.1:')
  expect(lines[0]).toContain('NOPERM')
}, 30_000)
