import { expect, it } from 'vitest'
import { main } from '../../src/cli/cli.ts'
import { captureOutput } from '../_servers.ts'

// A bad PORT was reported as "--port must be a whole number (got "abc")", a
// flag that the command line did not have.
it.each([
  ['PORT', 'abc', '--port must be a whole number (got "abc")'],
  ['SANDBOX_SEED', '1.5', '--seed must be a whole number (got "1.5")'],
  [
    'SANDBOX_LOG_FORMAT',
    'xml',
    '--log-format must be one of pretty, json (got "xml")',
  ],
])(
  'names the environment variable %s when its value is refused',
  async (name, value, message) => {
    const err = captureOutput()
    const { exitCode, server } = await main({
      args: ['--quiet'],
      stdout: captureOutput().stream,
      stderr: err.stream,
      env: { [name]: value },
    })
    await server?.close()
    expect(exitCode).toBe(2)
    expect(err.text().split('\n')[0]).toBe(
      `customer-token-sandbox: ${name}=${value} in the environment: ${message}`,
    )
  },
)

it('still names the flag when the flag is refused, even with the variable set', async () => {
  const err = captureOutput()
  const { exitCode } = await main({
    args: ['--port', 'x'],
    stdout: captureOutput().stream,
    stderr: err.stream,
    env: { PORT: '4100' },
  })
  expect(exitCode).toBe(2)
  expect(err.text().split('\n')[0]).toBe(
    'customer-token-sandbox: --port must be a whole number (got "x")',
  )
})
