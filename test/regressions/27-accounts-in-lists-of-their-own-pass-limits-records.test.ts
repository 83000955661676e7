// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE, DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'
import { customerNames, emptyFleet, postCustomer } from '../_servers.ts'

// On Redis, each account keeps its writes in a list of its own, under its
// own hash tag (a Redis Cluster spreads them over its nodes), appended with
// a compare-and-swap on that list alone. `limits.records` bounds the
// records of all accounts together: checked on what each replica had
// loaded, two replicas creating in two accounts at once stored past it.
// Replicas now reserve records in the sandbox's slot before they append.

let made = 0
const create = (url: string, key: string) =>
  postCustomer(
    url,
    { name: `L${made}`, email: `l${made++}@example.com` },
    { headers: { authorization: `Bearer ${key}` } },
  )

it('stores no record past limits.records from replicas that write to two accounts at once', async () => {
  // The seed makes 11 records (3 accounts, 8 API keys) and no customers:
  // room for 20.
  const { start } = await emptyFleet('records-apart', {
    limits: { records: 31 },
  })
  const a = await start()
  const b = await start()

  const answers = await Promise.all(
    Array.from({ length: 60 }, (_, n) =>
      create(n % 2 ? a.url : b.url, n % 4 < 2 ? DEMO_KEY_ONE : DEMO_KEY_TWO),
    ),
  )
  const created = answers.filter((answer) => answer.status === 201).length
  for (const refusal of answers.filter((answer) => answer.status !== 201)) {
    expect(refusal.status).toBe(409)
    const problem = (await refusal.json()) as { code: string; detail: string }
    expect(problem.code).toBe('limit_reached')
    expect(problem.detail).toContain('limits.records (31)')
  }
  expect(created).toBeGreaterThan(0)
  expect(created).toBeLessThanOrEqual(20)
  expect(await customerNames(a.url)).toHaveLength(created)
  expect(await customerNames(b.url)).toHaveLength(created)

  // What a replica reserved and did not use is the fleet's again once it
  // stops: the other fills the sandbox to the limit, and not past it.
  await a.close()
  let refused: Response | undefined
  for (let n = 0; n < 25 && refused === undefined; n++) {
    const answer = await create(b.url, n % 2 ? DEMO_KEY_ONE : DEMO_KEY_TWO)
    if (answer.status !== 201) refused = answer
  }
  expect(refused?.status).toBe(409)
  expect(await customerNames(b.url)).toHaveLength(20)
}, 60_000)
