import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

// Found twice in one stop's history: files that a run of the server left in
// the working folder (four request bodies, `f*.json`, then a `df1.pid`) went
// into commits with the rest, and one of them shipped through CI. The root
// holds what docs/project-layout.md describes, and nothing else.

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

const LAYOUT = [
  '.changeset',
  '.ci',
  '.gitignore',
  '.oxlintrc.json',
  '.prettierignore',
  '.prettierrc.json',
  '.spectral.yaml',
  'CHANGELOG.md',
  'LICENSE',
  'README.md',
  'bench',
  'docs',
  'etc',
  'examples',
  'fixtures',
  'handlers',
  'openapi.json',
  'package-lock.json',
  'package.json',
  'playground',
  'redocly.yaml',
  'scripts',
  'src',
  'test',
  'tsconfig.json',
  'tsdown.config.ts',
  'vitest.browser.config.ts',
  'vitest.config.ts',
]

// What .gitignore keeps out of commits at the root (`dist`, `*.tgz`): a
// test reads the folder, as CI's copy of the checkout has no `.git`.
const ignored = readFileSync(new URL('.gitignore', `file://${ROOT}/`), 'utf8')
  .split('\n')
  .filter((line) => line !== '' && !line.includes('/'))
  .map((line) =>
    line.startsWith('*')
      ? (name: string) => name.endsWith(line.slice(1))
      : (name: string) => name === line,
  )

it('keeps to the documented layout at the root, committed or about to be', () => {
  const stray = readdirSync(ROOT).filter(
    (name) =>
      name !== '.git' &&
      !LAYOUT.includes(name) &&
      !ignored.some((matches) => matches(name)),
  )
  expect(stray).toEqual([])
})
