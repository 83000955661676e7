import { readdir, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build, createServer } from 'vite'
import { expect, it } from 'vitest'
import { injectStart, resolveWorkerSource, sandbox } from '../src/vite.ts'

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

it('starts the sandbox before the page module scripts, in their order', () => {
  const html = [
    '<html><head><script type="module" src="/vendor.ts"></script></head>',
    '<body><script src="./main.ts" type="module"></script>',
    '<script src="/classic.js"></script></body></html>',
  ].join('\n')
  const out = injectStart(html, { seed: 7, persist: 'k</script>' })
  expect(out).not.toContain('src="/vendor.ts"')
  expect(out).not.toContain('src="./main.ts"')
  expect(out).toContain('<script src="/classic.js"></script>')
  const script = /<script type="module">([\s\S]*?)<\/script>/.exec(out)![1]!
  expect(script.trim().split('\n')).toEqual([
    'import { startSandboxWorker } from "customer-token-sandbox/browser"',
    'await startSandboxWorker({"seed":7,"persist":"k\\u003c/script>"})',
    'await import("/vendor.ts")',
    'await import("./main.ts")',
  ])
})
