import { readFile, stat } from 'node:fs/promises'
import { dirname, join, relative, resolve } from 'node:path'
import { expect, it } from 'vitest'
import packageJson from '../package.json' with { type: 'json' }
import {
  BLOCKS,
  fillBlocks,
  flagOf,
  optionRows,
  renderPages,
} from '../scripts/docs.ts'
import { LEDGER } from '../src/assumptions.ts'
import { ERROR_REGISTRY } from '../src/model/error-registry.ts'
import { resolveOptions } from '../src/options.ts'
import { VERSION } from '../src/version.ts'
import { markdownFiles, REPO } from './_docs.ts'
import {
  DEFAULT_SERVER_LIMITS,
  type SandboxServerOptions,
} from '../src/runtimes/node.ts'

const repo = REPO
const read = (file: string): Promise<string> =>
  readFile(join(repo, file), 'utf8')

const readme = await read('README.md')

it('has generated pages that match their sources (run npm run docs when this fails)', async () => {
  for (const [file, { text }] of await renderPages(read))
    expect(await read(file), file).toBe(text)
})

it('names a stale block and leaves the rest of its page alone', async () => {
  const keys = await read('docs/reference/keys.md')
  const stale = keys.replace('| every scope |', '| every scope, and more |')
  expect(stale).not.toBe(keys)
  const pages = await renderPages((file) =>
    file === 'docs/reference/keys.md' ? Promise.resolve(stale) : read(file),
  )
  expect(pages.get('docs/reference/keys.md')?.text).toBe(keys)
})

it('fails with the missing marker named when a block is gone', async () => {
  const page = await read('docs/reference/keys.md')
  const block = BLOCKS.find((b) => b.name === 'keys')!
  expect(() =>
    fillBlocks(block.file, page.replace('<!-- keys:start -->', ''), {
      keys: '',
    }),
  ).toThrow(/docs\/reference\/keys\.md has no <!-- keys:start -->/)
})

it('lists every assumption and every error code in the reference', async () => {
  const assumptions = await read('docs/reference/assumptions.md')
  const errors = await read('docs/reference/errors.md')
  for (const item of LEDGER) expect(assumptions).toContain(`\`${item.id}\``)
  for (const code of Object.keys(ERROR_REGISTRY))
    expect(errors).toContain(`\`${code}\``)
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
  expect(flagOf('customersPerAccount')).toBe('--customers')
  expect(flagOf('v1AcceptsTokens')).toBe('--no-v1-accepts-tokens')
  expect(flagOf('errorFormat')).toBeUndefined()
  for (const option of server) expect(flagOf(option)).toBeDefined()
})

// The options page once listed `--quiet` (the server's log) for the worker's
// `quiet`, showed the prose written after `store`'s `@default` as its
// default, and gave the deprecated `dataFileDelayMs` an empty row.
it('lists a flag only for an option the flag sets, a one-line default, and what is deprecated', async () => {
  expect(flagOf('quiet')).toBeUndefined()
  expect(flagOf('logFormat')).toBeUndefined()
  const row = (rows: string[][], option: string): string[] =>
    rows.find((r) => r[0] === `\`${option}\``)!
  const worker = await optionRows(
    'src/runtimes/browser.ts',
    'StartSandboxWorkerOptions',
    false,
  )
  expect(row(worker, 'quiet')[2]).toBe('')
  const server = await optionRows(
    'src/runtimes/node.ts',
    'SandboxServerOptions',
    true,
  )
  expect(row(server, 'store').slice(1, 3)).toEqual(['`undefined`', '`--store`'])
  expect(row(server, 'store')[3]).toContain('`namespace` begins every key')
  expect(row(server, 'dataFileDelayMs')[3]).toMatch(
    /^\*\*Deprecated\.\*\* Ignored: /,
  )
  const page = await read('docs/reference/options.md')
  expect(page).toContain('| `quiet` | `true` |  |')
  expect(page).toContain('| `store` | `undefined` | `--store` |')
  expect(page).toContain('| `dataFileDelayMs` |  |  | **Deprecated.** Ignored:')

  const prose = `interface Shape {
  /**
   * A count.
   * @default 1
   * and a sentence that belongs above the tags.
   */
  count?: number
}`
  await expect(
    optionRows('shape.ts', 'Shape', false, () => Promise.resolve(prose)),
  ).rejects.toThrow(
    /shape\.ts: the @default of Shape\.count runs over more than one line .*move the prose above the tags/,
  )
})

it('opens the README with the two commands', () => {
  const opening = readme.split('\n## ')[0]!
  expect(opening).toContain('npm ci && npm start')
  expect(opening).toContain('npm ci && npm test')
})

it('keeps the README to 12 KB, pointing to the docs for the rest', async () => {
  expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(12 * 1024)
  // Every page is reachable from the README's index.
  for (const file of await markdownFiles()) {
    if (file === 'README.md') continue
    expect(readme, `the README links ${file}`).toContain(`](${file})`)
  }
})

it('writes no path of a particular machine', async () => {
  for (const file of await markdownFiles())
    expect(await read(file), file).not.toMatch(
      /\/(?:work|tmp|home|root|Users)\//,
    )
})

/** A heading's anchor as GitHub makes it. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')

/** The anchors of a page's headings, outside code blocks. */
function anchors(text: string): Set<string> {
  const out = new Set<string>()
  const fenced = text.replace(/^```[\s\S]*?^```/gm, (block) =>
    block.replace(/[^\n]/g, ' '),
  )
  for (const line of fenced.split('\n')) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)
    if (heading) out.add(slug(heading[1]!))
  }
  return out
}

/** The text with fenced blocks and inline code blanked out. */
const withoutCode = (text: string): string =>
  text
    .replace(/^```[\s\S]*?^```/gm, (block) => block.replace(/[^\n]/g, ' '))
    .replace(/`[^`\n]*`/g, (span) => ' '.repeat(span.length))

it('has relative links that reach an existing file, and a heading there when they name one', async () => {
  const broken: string[] = []
  for (const file of await markdownFiles()) {
    const text = await read(file)
    for (const match of withoutCode(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1]!
      if (/^[a-z]+:/i.test(target)) continue
      const [path, anchor] = target.split('#') as [string, string | undefined]
      const absolute =
        path === '' ? join(repo, file) : resolve(repo, dirname(file), path)
      const exists = await stat(absolute).then(
        () => true,
        () => false,
      )
      if (!exists || !absolute.startsWith(repo)) {
        broken.push(`${file}: ${target} (no such file)`)
        continue
      }
      if (anchor === undefined) continue
      const page = await readFile(absolute, 'utf8')
      if (!anchors(page).has(anchor))
        broken.push(
          `${file}: ${target} (no heading #${anchor} in ${relative(repo, absolute)})`,
        )
    }
  }
  expect(broken).toEqual([])
})

it('states the version package.json has', () => {
  expect(VERSION).toBe(packageJson.version)
})
