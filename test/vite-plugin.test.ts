import { readdir, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build, createServer } from 'vite'
import { expect, it } from 'vitest'
import {
  injectStart,
  resolveWorkerSource,
  sandbox,
} from '../src/runtimes/vite.ts'

const root = new URL('..', import.meta.url).pathname
const example = new URL('../examples/vite-app/', import.meta.url).pathname

it('finds the installed msw worker script, through msw/vite from msw 3 on', async () => {
  const source = resolveWorkerSource(root)
  const major = Number(source.version.split('.')[0])
  expect(source.kind).toBe(major >= 3 ? 'msw/vite' : 'file')
  expect(await readFile(source.path, 'utf8')).toContain('Mock Service Worker')
})

it.each(['/', '/app/'])(
  'serves mockServiceWorker.js at the base URL %s in dev',
  async (base) => {
    const server = await createServer({
      configFile: false,
      root: example,
      base,
      logLevel: 'silent',
      plugins: [sandbox({ start: false })],
      server: { host: '127.0.0.1', port: 0 },
    })
    await server.listen()
    try {
      const origin = new URL(server.resolvedUrls!.local[0]!).origin
      const response = await fetch(`${origin}${base}mockServiceWorker.js`)
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toMatch(/javascript/)
      expect(await response.text()).toBe(
        await readFile(resolveWorkerSource(root).path, 'utf8'),
      )
    } finally {
      await server.close()
    }
  },
)

it('emits the worker script and starts the sandbox in a demo build (--mode demo)', async () => {
  const outDir = join(tmpdir(), `vite-demo-${process.pid}-${Date.now()}`)
  await build({
    root: example,
    configFile: join(example, 'vite.config.ts'),
    mode: 'demo',
    logLevel: 'silent',
    build: { outDir, emptyOutDir: true },
  })
  const files = await readdir(outDir, { recursive: true })
  expect(files).toContain('mockServiceWorker.js')
  expect(await readFile(join(outDir, 'mockServiceWorker.js'), 'utf8')).toBe(
    await readFile(resolveWorkerSource(root).path, 'utf8'),
  )
  const html = await readFile(join(outDir, 'index.html'), 'utf8')
  expect(html).toContain('customer-token-sandbox:ready')
  const scripts = await Promise.all(
    files
      .filter((file) => file.endsWith('.js') && file !== 'mockServiceWorker.js')
      .map((file) => readFile(join(outDir, file), 'utf8')),
  )
  // The revoked fixture key lives in the sandbox only, not in the app.
  expect(scripts.join('\n')).toContain('RevokedKeyForTheSandbox1')
  expect(scripts.join('\n')).toMatch(/mockServiceWorker\.js/)
})

it('leaves the worker script and the sandbox out of a production build', async () => {
  const outDir = join(tmpdir(), `vite-app-${process.pid}-${Date.now()}`)
  await build({
    root: example,
    configFile: join(example, 'vite.config.ts'),
    logLevel: 'silent',
    build: { outDir, emptyOutDir: true },
  })
  const files = await readdir(outDir, { recursive: true })
  expect(files).toContain('index.html')
  expect(files).not.toContain('mockServiceWorker.js')
  for (const file of files.filter((f) => /\.(js|html)$/.test(f))) {
    const text = await readFile(join(outDir, file), 'utf8')
    expect(text).not.toMatch(
      /startSandboxWorker|setupWorker|customer-token-sandbox|mockServiceWorker/,
    )
  }
})

it('leaves the page scripts as they were and starts the sandbox before its first module', () => {
  const html = [
    '<html><head><meta charset="utf-8"><script type="module" src="/vendor.ts"></script></head>',
    '<body><script src="./main.ts" type="module"></script>',
    '<script src="/classic.js"></script></body></html>',
  ].join('\n')
  const out = injectStart(html, { seed: 7, persist: 'k</script>' })
  // Every script of the page is still there, unchanged and in its order.
  const own = [
    '<script type="module" src="/vendor.ts"></script>',
    '<script src="./main.ts" type="module"></script>',
    '<script src="/classic.js"></script>',
  ]
  const at = own.map((tag) => out.indexOf(tag))
  expect(at.every((index) => index >= 0)).toBe(true)
  expect(at).toEqual(at.toSorted((a, b) => a - b))
  // The gate is the first script of <head>; the start comes before the first module.
  const gate = out.indexOf('<script>')
  expect(gate).toBeGreaterThan(out.indexOf('<head>'))
  expect(gate).toBeLessThan(out.indexOf('<meta charset'))
  const start = out.indexOf('<script type="module">')
  expect(start).toBeGreaterThan(gate)
  expect(start).toBeLessThan(at[0]!)
  const script = /<script type="module">([\s\S]*?)<\/script>/.exec(out)![1]!
  expect(script).toContain(
    'import { startSandboxWorker } from "customer-token-sandbox/browser"',
  )
  expect(script).toContain(
    'startSandboxWorker({"seed":7,"persist":"k\\u003c/script>"})',
  )
  expect(script).not.toMatch(/await import/)
})
