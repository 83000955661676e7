import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { DEMO_KEY_ONE, DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'
import { runMain, tempFolder } from '../_servers.ts'

// Found by an outside tester. A `--from` session whose journal entry held a
// whole API key (account two's, under account one's id) was replayed as
// given: GET /__sandbox/account/requests showed account one the whole key
// of account two, where the journal only ever writes a masked credential.
// And a session's bad options were blamed on flags or a config file the
// user never gave: `--max-body-bytes must be …`, `"fixtures" in the config
// file …`, or "unknown option" with the usage, for `--from file` alone.

const exported = async () => {
  const sandbox = createSandbox({ seed: 1, customersPerAccount: 1 })
  await sandbox.fetch('https://api.example.test/v1/customers', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
  })
  return structuredClone(sandbox.export()) as ReturnType<
    typeof sandbox.export
  > & {
    journal: Record<string, unknown>[]
    options: Record<string, unknown>
  }
}

it('refuses a session whose journal holds a whole API key, naming the entry', async () => {
  const session = await exported()
  session.journal[0]!.credential = DEMO_KEY_TWO
  expect(() => createSandbox({ from: session })).toThrow(
    /journal\.0\.credential: /,
  )
})

it('still replays the masked credentials the journal writes, of a key, a token or a malformed header', async () => {
  const session = await exported()
  const entry = session.journal[0]!
  session.journal = [
    'sk_test_…0002',
    'tok_test_…a1B2',
    '…wxyz',
    'sk_test_…',
  ].map((credential, i) => ({ ...entry, request_id: `req_${i}`, credential }))
  const replayed = createSandbox({ from: session })
  await replayed.ready
  expect(replayed.journal.list().map((e) => e.credential)).toEqual([
    'sk_test_…0002',
    'tok_test_…a1B2',
    '…wxyz',
    'sk_test_…',
  ])
})

it('refuses to start --from such a session: one line naming the entry, and the key printed nowhere', async () => {
  const session = await exported()
  session.journal[0]!.credential = DEMO_KEY_TWO
  const file = join(await tempFolder('cts-from-'), 'session.json')
  await writeFile(file, JSON.stringify(session))
  const [stderr, exitCode] = await runMain(['--port', '0', '--from', file])
  expect(exitCode).toBe(2)
  expect(stderr.split('\n')[0]).toContain('journal.0.credential')
  expect(stderr).not.toContain(DEMO_KEY_TWO)
})

it.each([
  [
    'a body limit past the most',
    (options: Record<string, unknown>) => (options.maxBodyBytes = 2 ** 31),
    /the session's options: option "maxBodyBytes" must be a whole number from 1 to 268435456, not 2147483648\./,
  ],
  [
    'a latency whose min is above its max',
    (options: Record<string, unknown>) =>
      (options.latency = { min: 5, max: 1 }),
    /the session's options: option "latency\.min" \(5\) is above "latency\.max" \(1\)/,
  ],
  [
    "a server's options",
    (options: Record<string, unknown>) => {
      options.host = '0.0.0.0'
      options.port = 1
    },
    /the session's options: unknown option "host", "port"\./,
  ],
  [
    'an admin token',
    (options: Record<string, unknown>) =>
      (options.adminToken = 'abcdefghijklmnop1234'),
    /the session's options: an export never holds "adminToken"/,
  ],
])(
  'names the session, not a flag, when its options hold %s',
  async (_, edit, message) => {
    const session = await exported()
    edit(session.options)
    const file = join(await tempFolder('cts-from-'), 'session.json')
    await writeFile(file, JSON.stringify(session))
    const [stderr, exitCode] = await runMain(['--port', '0', '--from', file])
    expect(exitCode).toBe(2)
    const [first] = stderr.split('\n')
    expect(first).toContain(`--from ${file}: `)
    expect(first).toMatch(message)
    expect(first).not.toMatch(/--max-body-bytes|--latency|config file/)
  },
)
