import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { runCli } from '../_servers.ts'

// A Bearer credential is one token68 (RFC 6750): letters, digits and
// -._~+/ with = at the end. A passphrase with spaces or quotes was taken at
// start, then no Authorization header could carry it: the admin surface
// stayed locked, each call answered "That is not the admin token.".

it.each([
  ['spaces', 'my admin token is long'],
  ['a quote', 'admin"token-of-sixteen'],
  ['a comma', 'admin,token-of-sixteen'],
])(
  'refuses at creation an admin token with %s, saying which characters it may hold',
  (_, adminToken) => {
    expect(() => createSandbox({ adminToken })).toThrow(
      /"adminToken" must be one Bearer credential: letters, digits and - \. _ ~ \+ \/ \(then = at the end\), no spaces/,
    )
  },
)

it('takes an admin token of those characters', () => {
  expect(() =>
    createSandbox({ adminToken: 'Abc-._~+/0123456789==' }),
  ).not.toThrow()
})

it('stops the CLI with one line and exit 2 for --admin-token with spaces', async () => {
  const cli = runCli(['--port', '0', '--admin-token', 'my admin token is long'])
  expect(await cli.exited).toBe(2)
  expect(cli.stderr()).toMatch(/--admin-token .*no spaces/)
  expect(cli.stderr()).not.toMatch(/\n\s+at /)
})
