import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { main } from '../../src/cli/cli.ts'
import { startRecorder } from '../../src/cli/record.ts'
import { startMisbehaving } from '../_misbehaving.ts'
import {
  captureOutput,
  startServer,
  tempFolder,
  verifyAgainst,
} from '../_servers.ts'

// verify once exited 0 with "0 match, 0 differ, 36 unknown" when a small
// --max-requests met a service that redirects in a loop: a run that compared
// nothing read as passed. A dead service's run also replaced the config that
// --write-config had learned before with the one it started from.

it('exits 4 and says why when a redirect loop spends the whole budget', async () => {
  const loop = await startMisbehaving({ kind: 'redirect-loop' })
  const { exitCode, report } = await verifyAgainst(
    loop.url,
    '--max-requests',
    '4',
  )
  expect(report).toContain('0 match, 0 differ, 36 unknown.')
  expect(report).toContain(
    "Nothing could be compared with the sandbox, so nothing passed: --max-requests (4) reached while following the service's redirects.",
  )
  expect(exitCode).toBe(4)
})

it('still passes a healthy service probed with the whole budget', async () => {
  const service = await startServer({ customersPerAccount: 0 })
  const { exitCode, report } = await verifyAgainst(service.url)
  expect(report).not.toContain('Nothing could be compared')
  expect(exitCode).toBe(0)
})

it('keeps the 3 of a service that fails, and says nothing was compared', async () => {
  const dead = await startMisbehaving({ kind: 'reset' })
  const folder = await tempFolder('cts-nothing-')
  const learned = join(folder, 'observed.json')
  await writeFile(learned, '{\n  "uniqueEmail": true\n}\n')
  const { exitCode, report } = await verifyAgainst(
    dead.url,
    '--write-config',
    learned,
  )
  expect(exitCode).toBe(3)
  expect(report).toContain(
    'Nothing could be compared with the sandbox, so nothing passed: the request failed: ',
  )
  expect(report).toContain(`Did not write ${learned}: nothing was observed`)
  expect(await readFile(learned, 'utf8')).toBe('{\n  "uniqueEmail": true\n}\n')
})

it('exits 4 for verify --from a session without an exchange', async () => {
  const service = await startServer({ customersPerAccount: 0 })
  const file = join(await tempFolder('cts-empty-session-'), 'session.jsonl')
  const recorder = await startRecorder({ target: service.url, file })
  await recorder.close()
  const out = captureOutput()
  const { exitCode } = await main({
    args: ['verify', '--from', file],
    stdout: out.stream,
    stderr: captureOutput().stream,
    env: {},
  })
  expect(out.text()).toContain(
    'Nothing could be compared with the sandbox, so nothing passed: the session holds no recorded exchange of POST /v1/customers or POST /v2/tokens to replay.',
  )
  expect(exitCode).toBe(4)
})
