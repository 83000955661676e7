import { request } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { expect, it } from 'vitest'
import { startServer } from '../_servers.ts'

// A /__sandbox/ change read its body inside the store's turn: on the data
// file, admin changes are made one at a time, so a client that sent half a
// body held every other admin change until it sent the rest (or its request
// timed out). The body is now read whole before the change takes its turn.

it('answers another /__sandbox/ change while the body of one is still coming', async () => {
  const server = await startServer({ seed: 1 })
  const { port } = new URL(server.url)
  const body = JSON.stringify({ advance_seconds: 60 })
  let finish!: () => void
  const slow = new Promise<number>((resolve, reject) => {
    const call = request(
      {
        port,
        method: 'POST',
        path: '/__sandbox/clock',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (response) => {
        response.resume()
        response.on('end', () => resolve(response.statusCode!))
      },
    )
    call.on('error', reject)
    call.write(body.slice(0, 5))
    finish = () => call.end(body.slice(5))
  })
  await sleep(100)

  const other = await fetch(`${server.url}/__sandbox/latency`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ min_ms: 0, max_ms: 0 }),
    // Held behind the half-sent body, it would wait for as long as that.
    signal: AbortSignal.timeout(5000),
  })
  expect(other.status).toBe(200)

  finish()
  expect(await slow).toBe(200)
})
