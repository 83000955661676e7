import { expect, it } from 'vitest'
import { startMisbehaving } from '../_misbehaving.ts'
import { verifyAgainst } from '../_servers.ts'

// A service that sent its status and headers, then stalled in the middle of
// the body, was reported as "did not answer within 300 ms": it had answered,
// and the one to look at was its body, not whether it was up.

it('says the service answered but did not finish its body', async () => {
  const stalled = await startMisbehaving({ kind: 'stalled-body' })
  const { exitCode, report } = await verifyAgainst(
    stalled.url,
    '--timeout',
    '300',
  )
  expect(report).toContain(
    'the service answered but did not finish its body within 300 ms',
  )
  expect(report).not.toContain('did not answer within')
  expect(exitCode).toBe(3)
})
