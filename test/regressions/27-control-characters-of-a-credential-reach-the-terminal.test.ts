import { expect, it } from 'vitest'
import { rawExchange } from '../_raw.ts'
import { startCli } from '../_servers.ts'

// Found by attacking the server from outside: a malformed credential is
// logged masked, with its last four characters as sent, and node takes
// bytes 0x80-0xFF in a header as Latin-1. `Authorization: Bearer
// sk_test_…<0x9b>2JX` put U+009B (a terminal's CSI) and `2J` (clear the
// screen) on the server's log line. The line escapes control characters now.

it('escapes control characters of a credential and a path in its log line', async () => {
  const cli = await startCli(['--port', '0'])
  const { port } = new URL(cli.url)
  const answer = await rawExchange(
    Number(port),
    'POST /v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      'Content-Length: 2\r\nAuthorization: Bearer sk_test_AAAAAAAAAAAA\u009b2JX\r\nConnection: close\r\n\r\n{}',
  )
  expect(answer.status).toBe(401)
  const [line] = await cli.waitFor(/POST\s+\/v1\/customers .*\n?/)
  expect(line).toContain('\\u009b2JX')
  // oxlint-disable-next-line no-control-regex -- control characters are what it looks for
  expect(cli.stdout()).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
})
