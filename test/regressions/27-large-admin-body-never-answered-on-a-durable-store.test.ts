// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { startServer, tempDataFile } from '../_servers.ts'

// Found by attacking the server from outside: with a data file or a Redis
// store, an admin call reads its body whole before it decides, and asked
// first whether there was one through `request.body`. On node:http that
// getter builds a web stream over the socket, which nothing read: once
// its queue filled, it paused the socket, and the body read beside it
// never ended. A `POST /__sandbox/clock` of 16,380 bytes (data file) or
// some 64 KiB (Redis) was never answered, not even by the request
// timeout, and held its connection; an account's key sufficed on
// `/__sandbox/account/clock` to use up `maxConnections`.

const padded = (json: object, bytes: number): string => {
  const text = JSON.stringify(json)
  return text + ' '.repeat(bytes - text.length)
}

const post = (url: string, path: string, body: string) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    // Not answered at all before the fix: the test fails here, not at its own timeout.
    signal: AbortSignal.timeout(10_000),
  })

it.each([
  ['a data file', async () => ({ dataFile: await tempDataFile() })],
  ['a Redis store', async () => ({ store: { url: (await startRedis()).url } })],
])(
  'answers an admin call with a large body on %s, and refuses one past maxBodyBytes',
  async (_, store) => {
    const server = await startServer({ seed: 1, ...(await store()) })
    const before = (await (
      await fetch(`${server.url}/__sandbox/clock`)
    ).json()) as { now: string }
    for (const bytes of [16_380, 70_000, 500_000]) {
      const moved = await post(
        server.url,
        '/__sandbox/clock',
        padded({ advance_seconds: 60 }, bytes),
      )
      expect(moved.status, await moved.clone().text()).toBe(200)
    }
    const after = (await (
      await fetch(`${server.url}/__sandbox/clock`)
    ).json()) as { now: string }
    expect(
      Date.parse(after.now) - Date.parse(before.now),
    ).toBeGreaterThanOrEqual(180_000)

    const over = await post(
      server.url,
      '/__sandbox/clock',
      padded({ advance_seconds: 60 }, 1_048_577),
    )
    expect(over.status).toBe(413)
    expect((await fetch(`${server.url}/__sandbox/health`)).status).toBe(200)
  },
  30_000,
)
