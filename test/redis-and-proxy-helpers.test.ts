import { createServer, type Server } from 'node:http'
import { readdir } from 'node:fs/promises'
import { createClient } from '@redis/client'
import { expect, it, onTestFinished } from 'vitest'
import { findRedisServer } from '../scripts/find-redis.mjs'
import { startRoundRobinProxy } from './_proxy.ts'
import { commandStats, startRedis } from './_redis.ts'

// The helpers the Redis store's end-to-end tests stand on: if they are
// wrong, those tests prove nothing.

async function connectTo(url: string) {
  const client = createClient({ url })
  client.on('error', () => {})
  await client.connect()
  onTestFinished(() => client.destroy())
  return client
}

/** An http server on a free port that answers with what it received. */
async function startEcho(name: string): Promise<string> {
  const server: Server = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(
        JSON.stringify({
          name,
          method: request.method,
          url: request.url,
          header: request.headers['x-test'],
          body,
        }),
      )
    })
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  onTestFinished(
    () =>
      new Promise<void>((done) => {
        server.closeAllConnections()
        server.close(() => done())
      }),
  )
  const address = server.address()
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
}

it('takes REDIS_SERVER first, and names it in one line when nothing can be run there', async () => {
  const found = await findRedisServer({ install: false })
  expect(await findRedisServer({ env: { REDIS_SERVER: found } })).toBe(found)
  await expect(
    findRedisServer({ env: { REDIS_SERVER: '/no/such/redis-server' } }),
  ).rejects.toThrow(
    /^REDIS_SERVER is \/no\/such\/redis-server, and there is no program there that can be run\.$/,
  )
})

it('starts a Redis on a free loopback port that answers PING, with its append-only file in its folder', async () => {
  const redis = await startRedis()
  expect(redis.url).toBe(`redis://127.0.0.1:${redis.port}/0`)
  const client = await connectTo(redis.url)
  expect(await client.ping()).toBe('PONG')
  expect(await client.configGet('appendonly')).toEqual({ appendonly: 'yes' })
  expect(await client.configGet('dir')).toEqual({
    dir: expect.stringContaining('cts-redis-'),
  })
  expect(await readdir(redis.dir)).toContain('appendonlydir')
})

it('keeps a key written with appendfsync always through a kill -9 and a restart on the same folder and port', async () => {
  const redis = await startRedis({ appendfsync: 'always' })
  const before = await connectTo(redis.url)
  expect(await before.configGet('appendfsync')).toEqual({
    appendfsync: 'always',
  })
  await before.set('acknowledged', 'kept')
  before.destroy()
  await redis.kill('SIGKILL')
  await redis.restart()
  const after = await connectTo(redis.url)
  expect(await after.get('acknowledged')).toBe('kept')
})

it('counts the commands Redis ran, by name, from INFO commandstats', async () => {
  const redis = await startRedis({ appendfsync: 'everysec' })
  const client = await connectTo(redis.url)
  await client.set('a', '1')
  await client.set('b', '2')
  await client.get('a')
  const calls = await commandStats(redis.url)
  expect(calls.set).toBe(2)
  expect(calls.get).toBe(1)
})

it('sends each request to the next target in turn, with its method, path, headers and body', async () => {
  const a = await startEcho('a')
  const b = await startEcho('b')
  const proxy = await startRoundRobinProxy([a, b])
  const answers = []
  for (let n = 0; n < 4; n++) {
    const response = await fetch(`${proxy.url}/v1/things/${n}?q=${n}`, {
      method: 'POST',
      headers: { 'x-test': `t${n}`, 'content-type': 'text/plain' },
      body: `body ${n}`,
    })
    expect(response.status).toBe(200)
    answers.push(await response.json())
  }
  expect(answers).toEqual(
    [0, 1, 2, 3].map((n) => ({
      name: n % 2 === 0 ? 'a' : 'b',
      method: 'POST',
      url: `/v1/things/${n}?q=${n}`,
      header: `t${n}`,
      body: `body ${n}`,
    })),
  )
})

it('answers 502 with a JSON body when its target is down, and sends the next request to the next target', async () => {
  const a = await startEcho('a')
  const b = await startEcho('b')
  // @note Port 1 is privileged and unused: a connection there is refused.
  const proxy = await startRoundRobinProxy([a, 'http://127.0.0.1:1', b])
  expect((await (await fetch(proxy.url)).json()).name).toBe('a')
  const refused = await fetch(proxy.url)
  expect(refused.status).toBe(502)
  expect(refused.headers.get('content-type')).toBe('application/json')
  expect(await refused.json()).toMatchObject({ error: 'bad_gateway' })
  expect((await (await fetch(proxy.url)).json()).name).toBe('b')
})
