// Runs once: every server here names its own store.
import { setTimeout as sleep } from 'node:timers/promises'
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { startServer } from '../_servers.ts'

// A restore keeps the queued scenarios, and on a Redis store it was stored
// wherever the log ended: a scenario that another replica queued (and
// answered 201 for) after this replica last read the log was gone from
// every replica, the restore holding the scenarios as this one held them.
// It now goes past other replicas' writes only when none of them changed
// the scenarios; otherwise it is decided again on them.

it('keeps the scenarios other replicas queued while a restore was stored', async () => {
  const redis = await startRedis()
  const options = {
    seed: 1,
    customersPerAccount: 20,
    store: { url: redis.url, namespace: 'restore-scenarios' },
  }
  const a = await startServer(options)
  const b = await startServer(options)
  const admin = (url: string, path: string, body: unknown) =>
    fetch(`${url}/__sandbox/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
  expect((await admin(a.url, 'snapshots', { name: 'start' })).status).toBe(201)

  const stop = new AbortController()
  let queued = 0
  const queue = async () => {
    while (!stop.signal.aborted) {
      const response = await admin(b.url, 'scenarios', {
        operation: 'createCustomer',
        status: 503,
      })
      if (response.status === 201) queued++
      await response.body?.cancel()
      // A stream with gaps: one without would outrun every restore (503).
      await sleep(5)
    }
  }
  const queuing = queue()
  const restores: number[] = []
  for (let i = 0; i < 8; i++) {
    const response = await admin(a.url, 'snapshots/restore', { name: 'start' })
    restores.push(response.status)
    await response.body?.cancel()
  }
  stop.abort()
  await queuing

  expect(restores).toContain(200)
  const listed = async (url: string) => {
    const response = await fetch(`${url}/__sandbox/scenarios`)
    return ((await response.json()) as { scenarios: unknown[] }).scenarios
  }
  const [onA, onB] = await Promise.all([listed(a.url), listed(b.url)])
  expect(onB).toEqual(onA)
  expect(onA).toHaveLength(queued)
}, 30_000)
