// Runs once: every server here names its own store.
import { expect, it, vi } from 'vitest'
import { startRedis } from '../_redis.ts'
import { createNamed, startServer } from '../_servers.ts'

// After Redis stalled (stopped four seconds) under steady traffic, the
// writes that a refusal woke to be decided again came while the append loop
// was ending: they waited in its batch for the next write, and with none,
// for the whole store timeout, though Redis answered at once. Each then
// answered 503 and marked Redis as answering nothing again, and a stall was
// logged dozens of times by turns with "answers again". A write that comes
// as the loop ends is now sent, and a call that runs out of time while Redis
// answers calls sent after it no longer marks Redis as answering nothing.

it('answers the writes of a stall once Redis goes on, and says so once', async () => {
  const redis = await startRedis()
  const server = await startServer({
    seed: 1,
    customersPerAccount: 0,
    store: { url: redis.url, namespace: 'stall' },
  })
  expect((await createNamed(server.url, 'Before')).status).toBe(201)
  const lines: string[] = []
  const spy = vi.spyOn(console, 'error').mockImplementation((line) => {
    lines.push(String(line))
  })
  let settled = 0
  try {
    redis.pause()
    const sent: Promise<Response>[] = []
    for (let n = 0; n < 40; n++) {
      sent.push(createNamed(server.url, `During${n}`))
      await new Promise((done) => setTimeout(done, 100))
    }
    const resumed = Date.now()
    redis.resume()
    await Promise.all(sent)
    settled = Date.now() - resumed
  } finally {
    spy.mockRestore()
  }
  // Well within the store timeout (3 s) of Redis going on.
  expect(settled).toBeLessThan(1500)
  const said = (words: string) =>
    lines.filter((line) => line.includes(words)).length
  expect(said('answered nothing for')).toBe(1)
  expect(said('answers again')).toBe(1)
  expect((await createNamed(server.url, 'After')).status).toBe(201)
}, 60_000)
