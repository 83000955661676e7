import { readFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import packageJson from '../package.json' with { type: 'json' }
import {
  flagOf,
  renderBlocks,
  renderReadme,
  staleBlocks,
} from '../scripts/docs.ts'
import { LEDGER } from '../src/assumptions.ts'
import { ERROR_REGISTRY } from '../src/request/errors.ts'
import { resolveOptions } from '../src/options.ts'
import { VERSION } from '../src/version.ts'
import {
  DEFAULT_SERVER_LIMITS,
  type SandboxServerOptions,
} from '../src/runtimes/node.ts'

const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8')

it('has README tables that match the keys, the error registry and the ledger (run npm run docs when this fails)', () => {
  expect(staleBlocks(readme)).toEqual([])
  expect(readme).toBe(renderReadme(readme))
})

it('names a stale table and leaves the rest of the README alone', () => {
  const stale = readme.replace('| `not_found` | 404 |', '| `not_found` | 418 |')
  expect(staleBlocks(stale)).toEqual(['errors'])
  expect(renderReadme(stale)).toBe(readme)
})

it('fails with the missing marker named when a block is gone', () => {
  const without = readme.replace('<!-- keys:start -->', '')
  expect(() => renderReadme(without)).toThrow(/<!-- keys:start -->/)
})

it('lists every assumption and every error code in the README', () => {
  for (const item of LEDGER) expect(readme).toContain(`\`${item.id}\``)
  for (const code of Object.keys(ERROR_REGISTRY))
    expect(readme).toContain(`\`${code}\``)
  expect(renderBlocks().assumptions.split('\n')).toHaveLength(LEDGER.length + 2)
})

it('names only options that SandboxOptions or the server has, and only flags that --help lists', () => {
  // Options of the standalone server that the ledger names.
  const server: (keyof SandboxServerOptions)[] = [
    ...(Object.keys(DEFAULT_SERVER_LIMITS) as (keyof SandboxServerOptions)[]),
    'adminOrigins',
    'allowedHosts',
  ]
  const options = [...Object.keys(resolveOptions()), ...server]
  for (const item of LEDGER) {
    if (item.option === null) continue
    expect(options).toContain(item.option)
  }
  expect(flagOf('uniqueEmail')).toBe('--unique-email')
  expect(flagOf('v1AcceptsTokens')).toBe('--no-v1-accepts-tokens')
  expect(flagOf('errorFormat')).toBeUndefined()
  for (const option of server) expect(flagOf(option)).toBeDefined()
})

it('opens with the two commands', () => {
  const opening = readme.split('\n## ')[0]!
  expect(opening).toContain('npm ci && npm start')
  expect(opening).toContain('npm ci && npm test')
})

it('writes no path of a particular machine', () => {
  expect(readme).not.toMatch(/\/(?:work|tmp|home|root|Users)\//)
})

it('states the version package.json has', () => {
  expect(VERSION).toBe(packageJson.version)
})
