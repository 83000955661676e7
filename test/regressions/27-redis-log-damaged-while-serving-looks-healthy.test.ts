import { expect, it } from 'vitest'
import { createNamed, emptyFleet } from '../_servers.ts'

// A namespace's log damaged while replicas served (an entry that is not
// this sandbox's, the key overwritten with another type) made every call
// answer 503 blaming an unreachable Redis, while health said "ok" and
// nothing said what was wrong. Health now says degraded, with what Redis
// holds that the replica cannot read, until a read succeeds again.

const health = async (url: string) => {
  const response = await fetch(`${url}/__sandbox/health`)
  return { status: response.status, body: (await response.json()) as unknown }
}

it('says degraded, naming what it cannot read, while the log holds a foreign entry or another type, and recovers once it is mended', async () => {
  const { start, client } = await emptyFleet('damaged')
  const server = await start()
  const log = '{damaged}:log'
  expect((await createNamed(server.url, 'Before')).status).toBe(201)

  await client.rPush(log, 'garbage{')
  expect((await fetch(`${server.url}/__sandbox/state`)).status).toBe(503)
  expect(await health(server.url)).toMatchObject({
    status: 503,
    body: { status: 'degraded', storage: { code: 'REDIS_BAD_LOG' } },
  })
  await client.rPop(log)
  expect(await health(server.url)).toEqual({
    status: 200,
    body: { status: 'ok' },
  })

  const saved = await client.lRange(log, 0, -1)
  await client.set(log, 'hello')
  expect((await createNamed(server.url, 'During')).status).toBe(503)
  expect(await health(server.url)).toMatchObject({
    status: 503,
    body: { status: 'degraded', storage: { code: 'REDIS_WRONGTYPE' } },
  })
  await client.del(log)
  await client.rPush(log, saved)
  client.destroy()
  expect((await createNamed(server.url, 'After')).status).toBe(201)
  expect((await health(server.url)).status).toBe(200)
})
