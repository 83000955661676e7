import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { main } from '../../src/cli/cli.ts'
import { captureOutput, runMain, tempFolder } from '../_servers.ts'

async function withConfig(
  config: object,
): Promise<[string, number | undefined]> {
  const file = join(await tempFolder('cts-config-'), 'sandbox.config.json')
  await writeFile(file, JSON.stringify({ port: 0, ...config }))
  return runMain(['--config', file, '--quiet'])
}

// A config file's server options of the wrong type reached node's own
// functions: "The "path" argument must be of type string", "host.startsWith
// is not a function", or "port must be a whole number (got 4100)".
it.each([
  [
    { dataFile: 5 },
    '"dataFile" in the config file expected string, received number',
  ],
  [{ dataFile: '' }, '"dataFile" in the config file must not be empty'],
  [
    { port: '4100' },
    '"port" in the config file must be a whole number from 0 to 65535, not "4100"',
  ],
  [{ host: null }, '"host" in the config file expected string, received null'],
  [
    { adminOrigins: 'https://a.test' },
    '"adminOrigins" in the config file expected array, received string',
  ],
  [
    { allowedHosts: [1] },
    '"allowedHosts" in the config file (entry 1) expected string, received number',
  ],
])(
  'names the option of the wrong type in %j, exit 2',
  async (config, message) => {
    const [stderr, code] = await withConfig(config)
    expect(code).toBe(2)
    expect(stderr.split('\n')[0]).toBe(`customer-token-sandbox: ${message}.`)
  },
)

// A --host that is no address of this machine: see
// 16-host-not-of-this-machine-unclear.test.ts.

it('listens on an IPv6 address written with brackets, as URLs write it', async () => {
  const out = captureOutput()
  const { server } = await main({
    args: ['--host', '[::1]', '--port', '0', '--quiet'],
    stdout: out.stream,
    stderr: captureOutput().stream,
    env: {},
  })
  try {
    expect(server?.url).toMatch(/^http:\/\/\[::1\]:\d+$/)
    expect((await fetch(`${server!.url}/__sandbox/health`)).status).toBe(200)
  } finally {
    await server?.close()
  }
})
