import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { checkResponse } from '../_openapi.ts'

// A session (`createSandbox({ from })`, `--from`) was replayed with a
// journal of anything: `{"foo": 1}` or a status of 99 came back from
// sandbox.journal.list() and from GET /__sandbox/requests, whose document
// they do not fit. Each entry must now be one the journal writes; the line
// names the JSON path at fault.

const exported = async () => {
  const sandbox = createSandbox({ seed: 1, customersPerAccount: 1 })
  await sandbox.fetch('https://api.example.test/v1/customers', {
    method: 'POST',
    headers: {
      authorization: 'Bearer sk_test_DemoKeyForTheSandbox0001',
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
  })
  return structuredClone(sandbox.export()) as ReturnType<
    typeof sandbox.export
  > & { journal: Record<string, unknown>[] }
}

it.each([
  [
    'an entry of other fields',
    (journal: Record<string, unknown>[]) => journal.push({ foo: 1 }),
    /journal\.1\.request_id: /,
  ],
  [
    'a field the journal does not write',
    (journal: Record<string, unknown>[]) => (journal[0]!.extra = true),
    /journal\.0: Unrecognized key: "extra"/,
  ],
  [
    'a status that is not a number',
    (journal: Record<string, unknown>[]) => (journal[0]!.status = '201'),
    /journal\.0\.status: /,
  ],
  [
    'a time that is not ISO 8601',
    (journal: Record<string, unknown>[]) => (journal[0]!.at = 'yesterday'),
    /journal\.0\.at: /,
  ],
])(
  'refuses a session whose journal has %s, naming the JSON path',
  async (_, edit, message) => {
    const session = await exported()
    edit(session.journal)
    expect(() => createSandbox({ from: session })).toThrow(message)
  },
)

it('replays an exported journal, which GET /__sandbox/requests serves as its document says', async () => {
  const session = await exported()
  const replayed = createSandbox({ from: session })
  await replayed.ready
  expect(replayed.journal.list()).toEqual(session.journal)
  const url = new URL('http://localhost/__sandbox/requests')
  const response = await replayed.fetch(url)
  await checkResponse(replayed, 'GET', url, response)
})
