import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { createSandboxServer } from '../../src/runtimes/node.ts'
import { runMain, tempFolder } from '../_servers.ts'

// The sandbox's options were named by their flags (28-cli-errors-name-…),
// the server's were not: `--port 70000` said `Failed to start the sandbox
// server: option "port" must be … See SandboxServerOptions for its type and
// default.`, words of an API its user never called.

it.each([
  [
    ['--port', '70000'],
    '--port must be a whole number from 0 to 65535, not 70000.',
  ],
  [['--host', ''], '--host must not be empty.'],
  [
    ['--max-connections', '0'],
    '--max-connections must be a whole number from 1 to 2147483647, not 0.',
  ],
  [
    ['--headers-timeout', '5000', '--request-timeout', '1000'],
    '--headers-timeout (5000) must not exceed --request-timeout (1000).',
  ],
])(
  'names the flag of a bad server option given as %j, exit 2',
  async (args, message) => {
    const [stderr, code] = await runMain(['--port', '0', '--quiet', ...args])
    expect(code).toBe(2)
    expect(stderr.split('\n')[0]).toBe(`customer-token-sandbox: ${message}`)
  },
)

it('names a server option from the config file by its key there', async () => {
  const file = join(await tempFolder('cts-config-'), 'sandbox.config.json')
  await writeFile(file, JSON.stringify({ port: '4100' }))
  const [stderr, code] = await runMain(['--config', file, '--quiet'])
  expect(code).toBe(2)
  expect(stderr.split('\n')[0]).toBe(
    'customer-token-sandbox: "port" in the config file must be a whole number from 0 to 65535, not "4100".',
  )
})

it('keeps the JavaScript API its own words', async () => {
  await expect(createSandboxServer({ port: 70_000 })).rejects.toThrow(
    'Failed to start the sandbox server: option "port" must be a whole number from 0 to 65535, not 70000. See SandboxServerOptions for its type and default.',
  )
  await expect(
    createSandboxServer({ headersTimeout: 5000, requestTimeout: 1000 }),
  ).rejects.toThrow(
    'Failed to start the sandbox server: headersTimeout (5000) must not exceed requestTimeout (1000).',
  )
})
