import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'
import packageJson from '../package.json' with { type: 'json' }
import tsdownConfig from '../tsdown.config.ts'

// Issue 28: the package's surface is its exports map. Each subpath with
// types is built, typed for old resolvers too, and the document ships.
const run = promisify(execFile)
const root = fileURLToPath(new URL('..', import.meta.url))

const typedSubpaths = Object.entries(packageJson.exports).filter(
  ([, target]) => typeof target === 'object' && 'types' in target,
)

it('builds, and types for node10 resolution, every subpath that has types', () => {
  const [library] = tsdownConfig as { entry: Record<string, string> }[]
  for (const [subpath, target] of typedSubpaths) {
    const name = subpath === '.' ? 'index' : subpath.slice(2)
    expect(Object.keys(library!.entry), subpath).toContain(name)
    expect((target as { types: string }).types).toBe(`./dist/${name}.d.ts`)
    if (name !== 'index')
      expect(packageJson.typesVersions['*'], subpath).toHaveProperty(name, [
        `./dist/${name}.d.ts`,
      ])
  }
})

it('keeps the fixtures and the contract tables out of the root export', async () => {
  const main = await import('customer-token-sandbox')
  const fixtures = await import('customer-token-sandbox/fixtures')
  const contract = await import('customer-token-sandbox/contract')
  expect(Object.keys(main).sort()).toEqual([
    'SandboxError',
    'createSandbox',
    'maskSecret',
    'problemJson',
    'resolveOptions',
  ])
  expect(fixtures.DEMO_KEY_ONE).toMatch(/^sk_test_/)
  expect(Object.keys(contract.ERROR_REGISTRY)).toContain('validation_failed')
})

it('ships openapi.json as customer-token-sandbox/openapi.json', async () => {
  const { default: document } = await import(
    'customer-token-sandbox/openapi.json',
    { with: { type: 'json' } }
  )
  expect(document).toEqual(
    JSON.parse(
      await readFile(new URL('../openapi.json', import.meta.url), 'utf8'),
    ),
  )
  // --ignore-scripts: `prepare` would build the playground too.
  const { stdout } = await run(
    'npm',
    ['pack', '--dry-run', '--json', '--ignore-scripts'],
    { cwd: root },
  )
  const [{ files }] = JSON.parse(stdout) as [{ files: { path: string }[] }]
  const paths = files.map((file) => file.path)
  expect(paths).toContain('openapi.json')
  expect(paths).toContain('dist/fixtures.d.ts')
  expect(paths).toContain('dist/contract.js')
}, 60_000)

it('runs the breaking-change checks in npm test', () => {
  expect(packageJson.scripts.test).toContain('npm run check:openapi-diff')
  expect(packageJson.scripts.test).toContain('npm run check:api')
})
