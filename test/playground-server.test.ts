import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from 'vite'
import { captureOutput } from './_servers.ts'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import { main } from '../src/cli/cli.ts'
import {
  createSandboxServer,
  type SandboxServer,
} from '../src/runtimes/node.ts'

// The standalone server's static files: the playground at `/`, nothing else.
let folder: string
let site: string
let server: SandboxServer
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'cts-static-'))
  site = join(folder, 'site')
  await mkdir(join(site, 'assets'), { recursive: true })
  await writeFile(
    join(site, 'index.html'),
    '<!doctype html><title>Site</title>',
  )
  await writeFile(join(site, 'assets', 'app-Ab12.js'), 'console.log(1)')
  await writeFile(join(site, 'mockServiceWorker.js'), '/* worker */')
  await writeFile(join(site, 'notes.env'), 'INSIDE=1')
  await writeFile(join(folder, 'secret.txt'), 'SECRET-OUTSIDE')
  server = await createSandboxServer({ port: 0, playground: site })
  // The default directory is the built playground: build it when missing.
  if (!existsSync(new URL('../dist/playground/index.html', import.meta.url))) {
    await build({
      configFile: new URL('../playground/vite.config.ts', import.meta.url)
        .pathname,
      logLevel: 'error',
    })
  }
})
afterAll(async () => {
  await server?.close()
  await rm(folder, { recursive: true, force: true })
})

/** Sends `path` exactly as written, as curl --path-as-is would. */
function raw(
  path: string,
  method = 'GET',
): Promise<{ status: number; type: string; body: string }> {
  const { port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, method },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            type: String(res.headers['content-type']),
            body,
          }),
        )
      },
    )
    req.on('error', reject)
    req.end()
  })
}

it('serves index.html at / and the files under it with their types', async () => {
  const page = await fetch(`${server.url}/`)
  expect(page.status).toBe(200)
  expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
  expect(page.headers.get('x-content-type-options')).toBe('nosniff')
  expect(await page.text()).toContain('<title>Site</title>')

  const asset = await fetch(`${server.url}/assets/app-Ab12.js`)
  expect(asset.headers.get('content-type')).toBe(
    'text/javascript; charset=utf-8',
  )
  expect(asset.headers.get('cache-control')).toContain('immutable')
  const worker = await fetch(`${server.url}/mockServiceWorker.js`)
  expect(worker.status).toBe(200)
  expect(worker.headers.get('cache-control')).toBe('no-cache')
  expect(await worker.text()).toBe('/* worker */')

  const head = await fetch(`${server.url}/`, { method: 'HEAD' })
  expect(head.status).toBe(200)
  expect(await head.text()).toBe('')
})

it.each([
  '/../secret.txt',
  '/..%2fsecret.txt',
  '/%2e%2e/secret.txt',
  '/assets/..%2F..%2Fsecret.txt',
  '/..%5csecret.txt',
  '/%00index.html',
  '/index.html%00.js',
])(
  'answers 404 problem JSON and nothing outside the folder for %s',
  async (path) => {
    const response = await raw(path)
    expect(response.status).toBe(404)
    expect(response.type).toBe('application/problem+json')
    expect(JSON.parse(response.body).code).toBe('not_found')
    expect(response.body).not.toContain('SECRET-OUTSIDE')
  },
)

it('answers 404 problem JSON for missing files and unknown types, whatever the method', async () => {
  for (const [path, method] of [
    ['/nope.html', 'GET'],
    ['/notes.env', 'GET'],
    ['/assets/', 'GET'],
    ['/nope.html', 'PUT'],
  ] as const) {
    const response = await raw(path, method)
    expect(response.status, `${method} ${path}`).toBe(404)
    expect(JSON.parse(response.body).code).toBe('not_found')
  }
})

// Found by attacking the server from outside: `PUT /` answered 404 "not
// served here" while `OPTIONS /` said `Allow: GET, HEAD, OPTIONS`, where
// the API's paths answer another method 405 with `Allow`.
it('answers another method of a file 405 method_not_allowed with Allow, as the API does', async () => {
  for (const [path, method] of [
    ['/', 'POST'],
    ['/', 'PUT'],
    ['/', 'DELETE'],
    ['/assets/app-Ab12.js', 'PATCH'],
  ] as const) {
    const response = await fetch(`${server.url}${path}`, { method })
    expect(response.status, `${method} ${path}`).toBe(405)
    expect(response.headers.get('allow')).toBe('GET, HEAD, OPTIONS')
    const problem = (await response.json()) as { code: string; detail: string }
    expect(problem.code).toBe('method_not_allowed')
    expect(problem.detail).toBe(
      `${path} takes GET, HEAD, OPTIONS, not ${method}.`,
    )
  }
  // Still serving, and the file unchanged.
  expect(await (await fetch(`${server.url}/`)).text()).toContain(
    '<title>Site</title>',
  )
})

it('still answers the API and /__sandbox/ beside the files', async () => {
  const created = await fetch(`${server.url}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
  })
  expect(created.status).toBe(201)
  expect((await fetch(`${server.url}/__sandbox/health`)).status).toBe(200)
  expect((await fetch(`${server.url}/v9/anything`)).status).toBe(404)
})

it('serves the built playground by default, and none with playground: false', async () => {
  const standard = await createSandboxServer({ port: 0 })
  const none = await createSandboxServer({ port: 0, playground: false })
  try {
    expect(standard.playgroundUrl).toBe(`${standard.url}/`)
    const page = await fetch(standard.playgroundUrl!)
    expect(await page.text()).toContain('Customer and Token Service sandbox')
    const worker = await fetch(`${standard.url}/mockServiceWorker.js`)
    expect(await worker.text()).toContain('Mock Service Worker')

    expect(none.playgroundUrl).toBeNull()
    expect((await fetch(`${none.url}/`)).status).toBe(404)
  } finally {
    await standard.close()
    await none.close()
  }
})

it("names the playground's URL in the CLI banner", async () => {
  const output = captureOutput()
  const { server: started } = await main({
    args: ['--port', '0'],
    stdout: output.stream,
    stderr: output.stream,
    env: { NO_COLOR: '1' },
  })
  try {
    expect(output.text()).toMatch(
      new RegExp(
        `Playground +${started!.url}/ \\(shows and drives this server; \\?mode=page runs it in the browser alone\\)`,
      ),
    )
  } finally {
    await started?.close()
  }
})
