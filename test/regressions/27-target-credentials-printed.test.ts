import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { runMain, startServer, tempFolder } from '../_servers.ts'

// A --target with a user and password in it once reached fetch, which refused
// it with an error quoting the whole URL: verify printed the password on every
// row and in --json, and record wrote it into the session file twice (its
// header and each 502) and sent it back to the client.

const PASSWORD = 'S3cretPassw0rdOfTheGateway'

it('verify refuses a target with credentials, and never prints the password', async () => {
  const service = await startServer({ customersPerAccount: 0 })
  const target = service.url.replace('//', `//alice:${PASSWORD}@`)
  const [stderr, exitCode] = await runMain([
    'verify',
    '--target',
    target,
    '--key',
    DEMO_KEY_ONE,
    '--json',
  ])
  expect(exitCode).toBe(2)
  expect(stderr).toContain(
    `--target must not hold a user name or password (got "${service.url.replace('//', '//…@')}")`,
  )
  expect(stderr).not.toContain(PASSWORD)
  expect(service.sandbox.journal.list()).toHaveLength(0)
})

it('record refuses a target with credentials before it creates a session file', async () => {
  const service = await startServer({ customersPerAccount: 0 })
  const folder = await tempFolder('cts-credentials-')
  const [stderr, exitCode] = await runMain([
    'record',
    '--target',
    service.url.replace('//', `//alice:${PASSWORD}@`),
    '--port',
    '0',
    '--out',
    join(folder, 'session.jsonl'),
  ])
  expect(exitCode).toBe(2)
  expect(stderr).toContain('--target must not hold a user name or password')
  expect(stderr).not.toContain(PASSWORD)
  expect(await readdir(folder)).toEqual([])
})

it('masks the password of a target that is not http(s)', async () => {
  const [stderr, exitCode] = await runMain([
    'verify',
    '--target',
    `ftp://alice:${PASSWORD}@files.example.com/api`,
    '--key',
    DEMO_KEY_ONE,
  ])
  expect(exitCode).toBe(2)
  expect(stderr).toContain(
    '--target must be an http(s) URL (got "ftp://…@files.example.com/api")',
  )
  expect(stderr).not.toContain(PASSWORD)
})
