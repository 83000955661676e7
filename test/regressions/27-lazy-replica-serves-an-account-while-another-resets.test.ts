import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { createSandboxCore } from '../../src/sandbox-core.ts'
import type { Store, StoreWrite } from '../../src/model/store.ts'

// A replica on Redis loads a request's account when the request comes, and
// holds it until the answer; a whole state that another replica stored (a
// reset) and that this one put back meanwhile lets go of it all the same.
// A request whose account was let go of after it was loaded and before the
// new data became the replica's (a few turns of the event loop, under load)
// was answered from none of its account's records: with --unique-email, a
// customer with an email its account holds was stored with a 201. It is now
// answered 503 storage_unavailable ("retry it"), as a request that a reset
// overtook is, and nothing is stored.

it('answers 503 and stores nothing for a request whose account the store let go of under it', async () => {
  const core = createSandboxCore({ seed: 1, uniqueEmail: true })
  await core.sandbox.ready
  const stored: StoreWrite[] = []
  const store: Store = {
    kind: 'lazy',
    outage: { where: 'in its store', until: 'it answers', code: 'LAZY' },
    // Loaded for the request, and let go of before it is answered.
    sync: () => Promise.resolve(() => {}),
    loaded: () => false,
    version: () => 0,
    commit(write) {
      stored.push(write)
      return Promise.resolve()
    },
    saveState: () => Promise.resolve(),
    fault: () => undefined,
  }
  core.attach(store)
  const { email } = core.sandbox.db.customers.findFirst((q) =>
    q.where({ account_id: 'acct_DemoAccount001' }),
  )!
  // Here, with none of the account's records, the email would look free.
  core.sandbox.db.customers.deleteMany((q) =>
    q.where({ account_id: 'acct_DemoAccount001' }),
  )
  const answer = await core.router.fetch(
    new Request('http://localhost/v1/customers', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${DEMO_KEY_ONE}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name: 'Clash', email }),
    }),
  )
  expect(answer.status).toBe(503)
  expect(answer.headers.get('retry-after')).toBe('1')
  expect(((await answer.json()) as { code: string }).code).toBe(
    'storage_unavailable',
  )
  expect(stored).toEqual([])
})
