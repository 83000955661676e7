import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { resolveOptions } from '../../src/options.ts'
import { runMain, tempFolder } from '../_servers.ts'

// `--scopes bad` said `option "scopes.0" must each be … See SandboxOptions
// for its type and default.`: the JavaScript API's words, for a user who
// typed a flag and never saw SandboxOptions.
it.each([
  [['--scopes', 'bad'], '--scopes (entry 1) must each be'],
  [
    ['--expires-in', 'min=100,max=70'],
    '--expires-in min (100) is above --expires-in max (70)',
  ],
  [
    ['--scopes', 'customers:read,customers:read'],
    '--scopes lists a scope twice',
  ],
  [
    ['--latency', '200-50ms'],
    '--latency min (200) is above --latency max (50)',
  ],
])(
  'names the flag of a bad value given as %j, exit 2',
  async (args, message) => {
    const [stderr, code] = await runMain([...args, '--port', '0', '--quiet'])
    expect(code).toBe(2)
    const first = stderr.split('\n')[0]!
    expect(first).toContain(`customer-token-sandbox: ${message}`)
    expect(first).not.toMatch(/SandboxOptions|option "/)
  },
)

it('names a value from the config file by its key there', async () => {
  const file = join(await tempFolder('cts-config-'), 'sandbox.config.json')
  await writeFile(file, JSON.stringify({ scopes: ['bad'] }))
  const [stderr, code] = await runMain([
    '--config',
    file,
    '--port',
    '0',
    '--quiet',
  ])
  expect(code).toBe(2)
  expect(stderr.split('\n')[0]).toBe(
    'customer-token-sandbox: "scopes" in the config file (entry 1) must each be "<resource>:<access>", e.g. "customers:read".',
  )
})

it('keeps the JavaScript API its own words', () => {
  expect(() => resolveOptions({ scopes: ['bad'] })).toThrow(
    'Failed to create a sandbox: option "scopes.0" must each be "<resource>:<access>", e.g. "customers:read". See SandboxOptions for its type and default.',
  )
  expect(() => resolveOptions({ expiresIn: { min: 100, max: 70 } })).toThrow(
    'option "expiresIn.min" (100) is above "expiresIn.max" (70)',
  )
})
