import { expect, it } from 'vitest'
import { DEMO_KEY_ONE, DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'
import { startRedis } from '../_redis.ts'
import { postCustomer, startServer } from '../_servers.ts'

// A replica that loaded an account while its own write of another account
// was being stored read the entries after its place, its own write among
// them, and then placed them after the place that write had moved it to:
// it took its own write for another replica's, applied it twice, counted
// the log longer than Redis held it, said "lost the log this replica
// followed", started again from the last whole state, and answered the
// requests under way 503 ("Another replica stored a whole new state"),
// with no reset, no restore and a second replica nowhere.

it('answers every request 201 while it loads one account beside a write of another', async () => {
  const redis = await startRedis()
  const store = { url: redis.url, namespace: 'lazy-own-write' }
  const options = { seed: 1, customersPerAccount: 3, store }
  await startServer(options)
  const said: string[] = []
  const original = console.error
  console.error = (...args: unknown[]) => said.push(args.join(' '))
  try {
    // Room for one account: each round loads the other one again.
    const replica = await startServer({
      ...options,
      store: { ...store, cacheRecords: 1 },
    })
    // Many at once, over both accounts: some load one account while a
    // write of the other is being stored.
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, at) =>
        postCustomer(
          replica.url,
          { name: 'Ada', email: `ada-${at}@example.com` },
          {
            headers: {
              authorization: `Bearer ${at % 2 ? DEMO_KEY_ONE : DEMO_KEY_TWO}`,
            },
          },
        ),
      ),
    )
    const statuses = answers.map((answer) => answer.status)
    expect(statuses.filter((status) => status !== 201)).toEqual([])
    expect(said.filter((line) => /lost the log/.test(line))).toEqual([])
    const state = (await (
      await fetch(`${replica.url}/__sandbox/state`)
    ).json()) as { customers: { email: string }[] }
    const made = state.customers.filter((c) => c.email.startsWith('ada-'))
    expect(made.length).toBe(200)
  } finally {
    console.error = original
  }
})
