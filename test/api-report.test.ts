import { execFile } from 'node:child_process'
import {
  cp,
  mkdtemp,
  readdir,
  readFile,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { REPORT_FOLDER, reportedEntries } from '../scripts/api-report.ts'

// Issue 28: a changed exported type fails `npm test` (npm run check:api).
// The check runs on a copy of the built package whose declarations were
// changed the way a careless edit of src/ would change them.
const repo = fileURLToPath(new URL('..', import.meta.url))
let dir: string

const check = (root: string) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>(
    (resolve) => {
      const child = execFile(
        process.execPath,
        ['--import', 'tsx', 'scripts/api-report.ts', '--check', '--root', root],
        { cwd: repo },
        (_, stdout, stderr) =>
          resolve({ code: child.exitCode, stdout, stderr }),
      )
    },
  )

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sandbox-api-report-'))
  await cp(join(repo, 'package.json'), join(dir, 'package.json'))
  await cp(join(repo, REPORT_FOLDER), join(dir, REPORT_FOLDER), {
    recursive: true,
  })
  await cp(join(repo, 'dist'), join(dir, 'dist'), {
    recursive: true,
    filter: (source) => !source.includes('playground'),
  })
  await symlink(join(repo, 'node_modules'), join(dir, 'node_modules'), 'dir')
})

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

it('reports every export of package.json that has types', () => {
  expect(reportedEntries().map(([name]) => name)).toEqual([
    'index',
    'node',
    'browser',
    'vite',
    'playwright',
    'fixtures',
    'contract',
  ])
})

it('passes the built package as it is, then fails on a changed exported type and names it', async () => {
  expect((await check(dir)).code).toBe(0)
  // FixtureApiKey.revoked becomes a string in the chunk that declares it.
  const chunks = (await readdir(join(dir, 'dist'))).filter((name) =>
    name.endsWith('.d.ts'),
  )
  let changed = 0
  for (const name of chunks) {
    const path = join(dir, 'dist', name)
    const text = await readFile(path, 'utf8')
    const next = text.replace(
      /(interface FixtureApiKey \{[^}]*revoked\?: )boolean/,
      '$1string',
    )
    if (next !== text) {
      await writeFile(path, next)
      changed++
    }
  }
  expect(changed).toBe(1)
  const result = await check(dir)
  expect(result.code).toBe(1)
  expect(result.stderr).toContain('customer-token-sandbox/fixtures changed')
  expect(result.stderr).toContain('+     revoked?: string;')
}, 120_000)
