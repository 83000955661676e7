import { expect, it } from 'vitest'
import { createNamed, emptyFleet } from '../_servers.ts'

// After Redis lost the log, a replica starts it again with a write; when
// Redis refused that write (out of memory under maxmemory, a read-only
// replica), health said Redis held "what this sandbox cannot read", and the
// 503 named an unreachable Redis, where Redis had only refused a write.
// Health now says Redis refused the write, in Redis's words, and goes back
// to ok once Redis takes writes again.

it('says Redis refused the write when it cannot start the lost log again, and recovers', async () => {
  const { start, client } = await emptyFleet('full')
  const server = await start()
  expect((await createNamed(server.url, 'Before')).status).toBe(201)
  await client.flushAll()
  await client.configSet({ maxmemory: '1', 'maxmemory-policy': 'noeviction' })

  const refused = await createNamed(server.url, 'Refused')
  expect(refused.status).toBe(503)
  expect(((await refused.json()) as { detail: string }).detail).toContain(
    'REDIS_OOM',
  )
  const health = await fetch(`${server.url}/__sandbox/health`)
  expect(await health.json()).toMatchObject({
    status: 'degraded',
    storage: {
      code: 'REDIS_OOM',
      message: expect.stringMatching(/refused the write: OOM/),
    },
  })

  await client.configSet('maxmemory', '0')
  client.destroy()
  expect((await createNamed(server.url, 'After')).status).toBe(201)
  expect((await fetch(`${server.url}/__sandbox/health`)).status).toBe(200)
})
