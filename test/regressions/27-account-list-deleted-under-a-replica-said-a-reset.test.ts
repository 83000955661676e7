// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { createNamed, emptyFleet, expectRecordsLost } from '../_servers.ts'

// Found by an outside tester: a replica that had loaded an account whose
// list was then deleted by hand answered its next create 503 "Another
// replica stored a whole new state (a reset, a restore, …)", which nobody
// had, with health ok; only the create after said the records were lost. It
// now says so at once, as a replica that loads the account does.

it('says the records are lost at the first write to an account whose list was deleted', async () => {
  const { start, client } = await emptyFleet('list-gone')
  const replica = await start()
  expect((await createNamed(replica.url, 'Kept')).status).toBe(201)
  const [list] = await client.keys('{list-gone:acct_DemoAccount001}:g:*')
  expect(await client.del(list!)).toBe(1)

  const refused = await createNamed(replica.url, 'After')
  expect(refused.status).toBe(503)
  expect(refused.headers.get('retry-after')).not.toBeNull()
  const problem = (await refused.json()) as { code: string; detail: string }
  expect(problem.code).toBe('storage_unavailable')
  expect(problem.detail).not.toMatch(/reset, a restore/)
  await expectRecordsLost(replica.url, list!)
})
