// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { postCustomer, startServer } from '../_servers.ts'

// Keyed creates sent at once to several replicas kept more keys than
// idempotency.maxEntriesPerAccount allows: each replica checked the cap on
// its own view, and a write decided again after another replica's came
// first kept the key it had claimed without checking the cap again. The
// key is now claimed again on the keys the store holds.

const CAP = 5

it('keeps no more Idempotency-Keys than maxEntriesPerAccount across the fleet, refusing the rest with the limit', async () => {
  const redis = await startRedis()
  const options = {
    seed: 1,
    customersPerAccount: 0,
    idempotency: { maxEntriesPerAccount: CAP },
    store: { url: redis.url, namespace: 'cap' },
  }
  const replicas = [
    await startServer(options),
    await startServer(options),
    await startServer(options),
  ]
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, n) =>
      postCustomer(
        replicas[n % 3]!.url,
        { name: `K${n}`, email: `k${n}@example.com` },
        { headers: { 'idempotency-key': `cap-${n}` } },
      ),
    ),
  )
  const statuses = answers.map((answer) => answer.status)
  const kept = statuses.filter((status) => status === 201)
  expect(kept.length).toBeLessThanOrEqual(CAP)
  expect(kept.length).toBeGreaterThan(0)
  const refused = await Promise.all(
    answers
      .filter((answer) => answer.status !== 201)
      .map(async (answer) => ({
        status: answer.status,
        code: ((await answer.json()) as { code: string }).code,
      })),
  )
  for (const { status, code } of refused) {
    expect(status).toBeGreaterThanOrEqual(400)
    expect(['limit_reached', 'storage_unavailable']).toContain(code)
  }
})
