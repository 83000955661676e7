// Runs once: every server here names its own store.
import { request } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { startRedis } from '../_redis.ts'
import { startServer } from '../_servers.ts'

// Found by the fleet's property test: a small admin change (an account's
// clock moved) that another replica's write outran was made again after the
// replica put back the whole state Redis holds, rather than after it caught
// up. Putting back the whole state dropped every request that replica was
// answering, each with a 503 saying that another replica had stored a whole
// new state (a reset, a restore), which none had. The change is taken back
// when it is refused, so catching up is enough.

it('answers the requests of a replica whose admin change another replica outran', async () => {
  const redis = await startRedis()
  const options = {
    seed: 1,
    customersPerAccount: 0,
    store: { url: redis.url, namespace: 'outrun' },
  }
  const a = await startServer(options)
  const b = await startServer(options)
  const auth = { authorization: `Bearer ${DEMO_KEY_ONE}` }

  // A create on A whose body is half sent: it is under way all along.
  const { port } = new URL(a.url)
  const body = JSON.stringify({ name: 'Held', email: 'held@example.com' })
  let finish!: () => void
  const held = new Promise<{ status: number; text: string }>(
    (resolve, reject) => {
      const call = request(
        {
          port,
          method: 'POST',
          path: '/v1/customers',
          headers: {
            ...auth,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (response) => {
          let text = ''
          response.on('data', (chunk: Buffer) => (text += chunk))
          response.on('end', () =>
            resolve({ status: response.statusCode!, text }),
          )
        },
      )
      call.on('error', reject)
      call.write(body.slice(0, 5))
      finish = () => call.end(body.slice(5))
    },
  )
  await sleep(100)

  // B writes without pause, so that A's clock moves keep losing the race.
  const stop = new AbortController()
  let n = 0
  const writer = (async () => {
    while (!stop.signal.aborted) {
      const response = await fetch(`${b.url}/v1/customers`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `B${n}`, email: `b${n++}@example.com` }),
      })
      expect(response.status).toBe(201)
      await response.body?.cancel()
    }
  })()
  for (let move = 0; move < 30; move++) {
    const moved = await fetch(`${a.url}/__sandbox/account/clock`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ advance_seconds: 1 }),
    })
    expect(moved.status).toBe(200)
  }
  stop.abort()
  await writer

  finish()
  const answer = await held
  expect(answer.text).not.toContain('whole new state')
  expect(answer.status).toBe(201)
  // And the clock moved 30 times, once each, on both replicas.
  for (const replica of [a, b]) {
    const clock = await fetch(`${replica.url}/__sandbox/account/clock`, {
      headers: auth,
    })
    const { now } = (await clock.json()) as { now: string }
    expect(Date.parse(now)).toBeGreaterThan(Date.now() + 25_000)
  }
}, 30_000)
