// Runs once: every server here names its own store.
import { expect, it, vi } from 'vitest'
import { startRedis } from '../_redis.ts'
import { createNamed, startServer } from '../_servers.ts'

// The first replica on an empty Redis writes its seeded records into the
// generation's keys, a thousand a command; a reset writes its records so
// too. The store's timeout bounded all of those commands at once, as one
// call: a replica seeded with a hundred thousand customers per account and
// a short timeout failed its start ("answered nothing within 500 ms"),
// though Redis answered every command at once. Each command is bounded on
// its own now.

// @note A Redis that takes 40 ms over each script, one after another (a
// busy node): the commands of a seed then add up to seconds,
// each well within the timeout, on a fast machine as on a slow one.
const PER_COMMAND_MS = 40
vi.mock('@redis/client', async (original) => {
  const { aroundScripts } = await import('../_around-scripts.ts')
  let last: Promise<unknown> = Promise.resolve()
  return aroundScripts(await original(), (send) => {
    // @note Run, then answered 40 ms later: a script refused at once
    // (NOSCRIPT, on a Redis that lacks it) costs no time.
    const sent = last
      .then(send)
      .then(
        (answer) =>
          new Promise((done) => setTimeout(() => done(answer), PER_COMMAND_MS)),
      )
    last = sent.catch(() => {})
    return sent
  })
})

it('starts and resets with many seeded records on a slow Redis, under a store timeout each command meets', async () => {
  const redis = await startRedis()
  // The store's timeout (3 s) shortened, as the store takes it: no option
  // of the server names it. Well above one command's 40 ms under load,
  // well below the seed's 50 commands (2 s).
  const store = { url: redis.url, namespace: 'seeded', timeoutMs: 1000 }
  const options = {
    seed: 1,
    customersPerAccount: 25_000,
    limits: { customersPerAccount: 50_000 },
    store,
  }
  const first = await startServer(options)
  expect((await createNamed(first.url, 'Seeded')).status).toBe(201)
  const second = await startServer(options)
  expect((await fetch(`${second.url}/__sandbox/health`)).status).toBe(200)

  const reset = await fetch(`${first.url}/__sandbox/reset`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
  expect(reset.status, await reset.clone().text()).toBe(200)
  expect((await createNamed(first.url, 'After')).status).toBe(201)
  for (const server of [first, second])
    expect((await fetch(`${server.url}/__sandbox/health`)).status).toBe(200)
}, 60_000)
