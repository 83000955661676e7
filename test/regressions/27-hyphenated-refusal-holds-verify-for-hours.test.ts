import { expect, it } from 'vitest'
import { startMisbehaving } from '../_misbehaving.ts'
import { verifyAgainst } from '../_servers.ts'

// Found by attacking verify from outside: the scopes a service names in its
// refusal of an unknown scope were found with a pattern that starts again
// at each word boundary, and over a refusal of `a-a-a-…` the work grew with
// the square of its length: 200 KB held verify 30 s, deaf to Ctrl-C and
// --timeout, and 8 MB (the default --max-body) would have held it for
// hours. verify reads a refusal's first 4 KB for scope names now.

it('reads a refusal of 400 KB of hyphenated words for scope names in no time, and reports', async () => {
  const service = await startMisbehaving({ kind: 'hyphens', bytes: 400_000 })
  const { exitCode, report } = await verifyAgainst(
    service.url,
    '--max-requests',
    '150',
  )
  expect(exitCode).toBeDefined()
  expect(report).toContain('token.scope-catalog')
}, 30_000)
