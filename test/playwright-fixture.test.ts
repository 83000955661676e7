import { spawn } from 'node:child_process'
import { cp, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, expect, it } from 'vitest'

const repo = fileURLToPath(new URL('..', import.meta.url))
const scratch = await mkdtemp(join(tmpdir(), 'sandbox-playwright-'))
afterAll(() => rm(scratch, { recursive: true, force: true }))

/**
 * Every module `file` loads, statically or through `import()`, and the
 * packages it names: what running it can require.
 */
async function moduleGraph(
  file: string,
  seen = new Set<string>(),
  packages = new Set<string>(),
): Promise<Set<string>> {
  if (seen.has(file)) return packages
  seen.add(file)
  const source = await readFile(file, 'utf8')
  const specifiers = source.matchAll(
    /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g,
  )
  for (const match of specifiers) {
    const specifier = (match[1] ?? match[2])!
    if (specifier.startsWith('.'))
      await moduleGraph(resolve(dirname(file), specifier), seen, packages)
    else packages.add(specifier)
  }
  return packages
}

it('loads no msw: neither the fixture nor the server it starts needs it, so msw 2, msw 3 or none all work', async () => {
  const packages = await moduleGraph(join(repo, 'dist/playwright.js'))
  expect([...packages]).toContain('@playwright/test')
  expect([...packages]).toContain('srvx/node')
  expect([...packages].filter((name) => /^msw(?:\/|$)/.test(name))).toEqual([])
  // So npm must not ask for msw either: the one entry that needs none.
  const manifest = JSON.parse(
    await readFile(join(repo, 'package.json'), 'utf8'),
  ) as { peerDependenciesMeta: Record<string, { optional?: boolean }> }
  expect(manifest.peerDependenciesMeta.msw?.optional).toBe(true)
})

it('runs examples/playwright with 4 parallel workers on one server, and no clock, fault or journal entry crosses between tests', async () => {
  // The example as a consumer has it: its own folder, the package and
  // Playwright in its node_modules.
  const project = join(scratch, 'project')
  await cp(join(repo, 'examples/playwright'), project, { recursive: true })
  await mkdir(join(project, 'node_modules/@playwright'), { recursive: true })
  await symlink(repo, join(project, 'node_modules/customer-token-sandbox'))
  await symlink(
    join(repo, 'node_modules/@playwright/test'),
    join(project, 'node_modules/@playwright/test'),
  )
  const rendezvous = join(scratch, 'rendezvous')
  const env: Record<string, string | undefined> = {
    ...process.env,
    SANDBOX_EXAMPLE_RENDEZVOUS: rendezvous,
    CI: '1',
  }
  delete env.CUSTOMER_TOKEN_SANDBOX_URL
  delete env.CUSTOMER_TOKEN_SANDBOX_ADMIN_TOKEN
  const child = spawn(
    process.execPath,
    [
      join(repo, 'node_modules/@playwright/test/cli.js'),
      'test',
      '--workers',
      '4',
      '--reporter',
      'json',
    ],
    { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk))
  const code = await new Promise<number | null>((done) =>
    child.on('exit', done),
  )

  const report = JSON.parse(stdout) as {
    stats: { expected: number; unexpected: number; flaky: number }
    suites: { file: string; specs: Spec[] }[]
    errors: unknown[]
  }
  interface Spec {
    title: string
    tests: { results: { status: string; parallelIndex: number }[] }[]
  }
  const results = report.suites
    .flatMap((suite) => suite.specs)
    .flatMap((spec) =>
      spec.tests.flatMap((test) =>
        test.results.map((result) => ({ title: spec.title, ...result })),
      ),
    )
  expect(report.errors, stderr).toEqual([])
  expect(
    results.map(({ title, status }) => [title, status]).toSorted(),
    stdout,
  ).toEqual([
    ['a 503 queued for this test hits only this test', 'passed'],
    ["a token expires on this test's clock only", 'passed'],
    ['account 1: clock +1 h, next customer 500', 'passed'],
    ['account 2: clock +2 h, next customer 502', 'passed'],
    ['account 3: clock +5 h, next customer 503', 'passed'],
    ['account 4: clock +9 h, next customer 504', 'passed'],
  ])
  expect(report.stats).toMatchObject({ expected: 6, unexpected: 0, flaky: 0 })
  expect(code).toBe(0)
  // Four workers at once: the four isolation tests each waited at the
  // rendezvous until all four were there, so each had a slot of its own.
  const isolation = results.filter((result) =>
    result.title.startsWith('account '),
  )
  expect(new Set(isolation.map((result) => result.parallelIndex)).size).toBe(4)
  expect(report.suites.map((suite) => basename(suite.file)).toSorted()).toEqual(
    ['customers.spec.ts', 'isolation.spec.ts'],
  )
}, 240_000)
