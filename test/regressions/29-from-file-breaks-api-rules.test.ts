import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import type { SandboxSession } from '../../src/model/schemas.ts'
import { runMain, tempFolder } from '../_servers.ts'

// A `--from` session was replayed whatever it held: a 5 MB customer name, a
// customer of an account the session does not have, a journal of 200,000
// entries with journalLimit 1,000. No request could have made them; each is
// now refused with a line that names the JSON path at fault.

/** A session with two customers, as sandbox.export() gives it. */
const exported = async (): Promise<SandboxSession> => {
  const sandbox = createSandbox({ seed: 1, customersPerAccount: 2 })
  await sandbox.ready
  return structuredClone(sandbox.export())
}

const CASES: [string, (session: SandboxSession) => void, RegExp][] = [
  [
    'a customer name longer than nameLength.max',
    (session) => {
      session.data.customers[1]!.name = 'x'.repeat(5_000_000)
    },
    /data\.customers\.1\.name: it is 5000000 characters long, more than nameLength\.max \(200\)/,
  ],
  [
    'a customer of no account',
    (session) => {
      session.data.customers[0]!.account_id = 'acct_nobody'
    },
    /data\.customers\.0\.account_id: "acct_nobody" is not the id of an account in data\.accounts/,
  ],
  [
    'a journal longer than journalLimit',
    (session) => {
      session.journal = Array.from({ length: 200_000 }, () => ({}))
    },
    /journal: it holds 200000 entries, more than the 1000 that journalLimit keeps/,
  ],
]

it.each(CASES)(
  'refuses a session with %s, naming the JSON path',
  async (_, edit, message) => {
    const session = await exported()
    edit(session)
    expect(() => createSandbox({ from: session })).toThrow(message)
  },
)

it('replays the same session untouched, and one whose journal fits a journalLimit passed beside it', async () => {
  const session = await exported()
  const replayed = createSandbox({ from: session })
  await replayed.ready
  expect(replayed.customers.count()).toBe(session.data.customers.length)
  session.journal = Array.from({ length: 1500 }, (_, i) => ({
    request_id: `req_${i}`,
    operation: 'createCustomer',
    method: 'POST',
    path: '/v1/customers',
    status: 201,
    code: null,
    account_id: 'acct_DemoAccount001',
    credential: 'sk_test_…0001',
    duration_ms: 1,
    at: session.data.clock.now,
    scenario: null,
    replayed: false,
  }))
  expect(() =>
    createSandbox({ from: session, journalLimit: 2000 }),
  ).not.toThrow()
})

it('prints one line naming the JSON path when the CLI is started --from such a file', async () => {
  const session = await exported()
  session.data.customers[0]!.account_id = 'acct_nobody'
  const file = join(await tempFolder('cts-from-'), 'session.json')
  await writeFile(file, JSON.stringify(session))
  const [stderr, exitCode] = await runMain(['--port', '0', '--from', file])
  expect(exitCode).not.toBe(0)
  const lines = stderr.trim().split('\n')
  expect(lines[0]).toContain('data.customers.0.account_id')
  expect(stderr).not.toMatch(/\n\s+at /)
})
