import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'
import packageJson from '../package.json' with { type: 'json' }
import tsdownConfig from '../tsdown.config.ts'
import { SANDBOX_PROSE } from '../handlers/sandbox.docs.ts'
import { ERROR_REGISTRY } from '../src/model/error-registry.ts'

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
  expect(Object.keys(main).toSorted()).toEqual([
    'SandboxError',
    'createSandbox',
    'maskSecret',
    'problemJson',
    'resolveOptions',
  ])
  expect(fixtures.DEMO_KEY_ONE).toMatch(/^sk_test_/)
  expect(Object.keys(contract.ERROR_REGISTRY)).toContain('validation_failed')
})

/** The built code that `dist/<entry>` loads at start: it and its static imports. */
async function loadedAtStart(entry: string): Promise<string> {
  const seen = new Set<string>()
  const visit = async (file: string): Promise<string> => {
    if (seen.has(file)) return ''
    seen.add(file)
    const code = await readFile(
      new URL(`../dist/${file}`, import.meta.url),
      'utf8',
    )
    const imported = [...code.matchAll(/\bfrom\s*"\.\/([^"]+)"/g)].map(
      ([, name]) => visit(name!),
    )
    return [code, ...(await Promise.all(imported))].join('\n')
  }
  return visit(entry)
}

it("loads the document's words with the document, not with the page", async () => {
  const words = [
    SANDBOX_PROSE.reset!.description,
    ERROR_REGISTRY.method_not_allowed.when,
    ERROR_REGISTRY.method_not_allowed.trigger,
  ]
  for (const entry of ['browser.js', 'index.js']) {
    const code = await loadedAtStart(entry)
    // The entry does answer /openapi.json: its generator is imported on demand.
    expect(code, entry).toMatch(/import\("\.\/openapi-[^"]+\.js"\)/)
    for (const text of words) expect(code, entry).not.toContain(text)
  }
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
