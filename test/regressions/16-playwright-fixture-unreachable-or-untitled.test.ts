import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, expect, it } from 'vitest'
import { createSandboxServer } from '../../src/runtimes/node.ts'
import { createSandboxFixture } from '../../src/runtimes/playwright.ts'

// The fixture pointed at nothing said only "fetch failed" (its cause "bad
// port" or ECONNREFUSED), at a URL without a scheme "Failed to parse URL",
// at a server that is not a sandbox "404" and nothing more; and a test whose
// title has no visible character failed in the fixture, the title being
// sent as the account's name, which needs one.

const repo = fileURLToPath(new URL('../..', import.meta.url))
const scratch = await mkdtemp(join(tmpdir(), 'sandbox-fixture-'))
afterAll(() => rm(scratch, { recursive: true, force: true }))

async function listen(server: Server): Promise<string> {
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

it('says where it looked, and how to start or name a sandbox, when none answers', async () => {
  const server = createServer()
  const url = await listen(server)
  await new Promise((done) => server.close(done))
  const failure = createSandboxFixture(url)
  await expect(failure).rejects.toThrow(
    `Failed to reach the sandbox at ${url} (ECONNREFUSED): is it running there?`,
  )
  await expect(failure).rejects.toThrow('sandboxGlobalSetup()')
  await expect(failure).rejects.toThrow('CUSTOMER_TOKEN_SANDBOX_URL')
})

it('refuses a URL that is not http(s), naming where it came from', async () => {
  await expect(createSandboxFixture('127.0.0.1:4100')).rejects.toThrow(
    'Failed to use the sandbox at "127.0.0.1:4100": it is not an http(s) URL such as http://127.0.0.1:4100 (check use.sandboxUrl',
  )
})

it('says that a server answering without problem JSON is no sandbox', async () => {
  const server = createServer((_, response) => {
    response
      .writeHead(404, { 'content-type': 'text/html' })
      .end('<h1>Not found</h1>')
  })
  const url = await listen(server)
  try {
    await expect(createSandboxFixture(url)).rejects.toThrow(
      'Failed to POST /__sandbox/api-keys: 404 <h1>Not found</h1> (not an answer of a sandbox server: is it running there?',
    )
  } finally {
    await new Promise((done) => server.close(done))
  }
})

it('gives a test whose title has no visible character its account all the same', async () => {
  const project = join(scratch, 'project')
  await mkdir(join(project, 'node_modules/@playwright'), { recursive: true })
  await symlink(repo, join(project, 'node_modules/customer-token-sandbox'))
  await symlink(
    join(repo, 'node_modules/@playwright/test'),
    join(project, 'node_modules/@playwright/test'),
  )
  await writeFile(join(project, 'package.json'), '{"type":"module"}')
  await writeFile(
    join(project, 'playwright.config.js'),
    "export default { testDir: '.', workers: 1 }\n",
  )
  await writeFile(
    join(project, 'untitled.spec.js'),
    [
      "import { expect, test } from 'customer-token-sandbox/playwright'",
      "test('\\u200B', async ({ sandbox }) => {",
      '  expect(sandbox.key).toMatch(/^sk_test_/)',
      '})',
      '',
    ].join('\n'),
  )
  const env: Record<string, string | undefined> = { ...process.env, CI: '1' }
  delete env.CUSTOMER_TOKEN_SANDBOX_URL
  delete env.CUSTOMER_TOKEN_SANDBOX_ADMIN_TOKEN
  const child = spawn(
    process.execPath,
    [
      join(repo, 'node_modules/@playwright/test/cli.js'),
      'test',
      '--reporter',
      'json',
    ],
    { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let stdout = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk))
  const code = await new Promise((done) => child.on('exit', done))
  const report = JSON.parse(stdout) as {
    stats: { expected: number; unexpected: number }
  }
  expect(report.stats, stdout).toMatchObject({ expected: 1, unexpected: 0 })
  expect(code).toBe(0)
}, 120_000)

// A server started with --admin-token answered the fixture's call with a
// 401 about an Authorization header, and an invalid Date given to
// clock.set() threw "Invalid time value".
it('says how to give the fixture the admin token, and refuses an invalid Date', async () => {
  const server = await createSandboxServer({
    port: 0,
    playground: false,
    adminToken: 'an-admin-token-of-this-test',
  })
  try {
    await expect(createSandboxFixture(server.url)).rejects.toThrow(
      'The fixture sends the admin token given as use: { sandboxAdminToken } in playwright.config.ts or in CUSTOMER_TOKEN_SANDBOX_ADMIN_TOKEN',
    )
    await expect(createSandboxFixture(server.url)).rejects.toThrow(
      'give it the token the server was started with (its adminToken option, or --admin-token on the command line).',
    )
    const fixture = await createSandboxFixture(server.url, {
      adminToken: 'an-admin-token-of-this-test',
    })
    expect(() => fixture.clock.set(new Date(Number.NaN))).toThrow(
      'Failed to set the sandbox clock: the Date given is invalid',
    )
  } finally {
    await server.close()
  }
})
