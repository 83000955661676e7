import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { runMain, startServer, tempFolder } from '../_servers.ts'

// verify, which calls only POST /v1/customers and POST /v2/tokens, appended
// those paths to the text of --target: with "?tenant=acme" every POST went to
// /api?tenant=acme/v1/customers, and with "#frag" to /api itself, and the
// answers of that other endpoint were graded (exit 1). record did the same to
// each call it forwarded.

it.for(['?tenant=acme', '#section', '?'])(
  'verify refuses a target ending in "%s" and sends nothing',
  async (tail) => {
    const service = await startServer({ customersPerAccount: 0 })
    const [stderr, exitCode] = await runMain([
      'verify',
      '--target',
      `${service.url}/api${tail}`,
      '--key',
      DEMO_KEY_ONE,
    ])
    expect(exitCode).toBe(2)
    expect(stderr).toContain(
      `--target must be a base URL without a ?query or #fragment (got "${service.url}/api${tail}"): /v1/customers and /v2/tokens are added to it`,
    )
    expect(service.sandbox.journal.list()).toHaveLength(0)
  },
)

it('record refuses a target with a query before it creates a session file', async () => {
  const service = await startServer({ customersPerAccount: 0 })
  const folder = await tempFolder('cts-target-query-')
  const [stderr, exitCode] = await runMain([
    'record',
    '--target',
    `${service.url}/?tenant=acme`,
    '--port',
    '0',
    '--out',
    join(folder, 'session.jsonl'),
  ])
  expect(exitCode).toBe(2)
  expect(stderr).toContain('--target must be a base URL without a ?query')
  expect(await readdir(folder)).toEqual([])
})
