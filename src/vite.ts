import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Plugin, ResolvedConfig, ViteDevServer } from 'vite'
import type { StartSandboxWorkerOptions } from './browser.ts'

const WORKER_FILENAME = 'mockServiceWorker.js'
const BROWSER_ENTRY = 'customer-token-sandbox/browser'

/** Options of `startSandboxWorker()` that survive JSON: no functions. */
export type InjectedStartOptions = Omit<
  StartSandboxWorkerOptions,
  'errorFormat' | 'onRequest' | 'onSeedProgress' | 'serviceWorker'
>

/** Options of the `sandbox()` Vite plugin. */
export interface SandboxPluginOptions {
  /**
   * Starts the sandbox in every page of the dev server before the page's own
   * module scripts run, with these options, so the app's first request is
   * already answered. `false` only serves the worker script and leaves
   * `startSandboxWorker()` to your code.
   * @default {}
   * @example sandbox({ start: { persist: true, seed: 7 } })
   * @example sandbox({ start: false })
   */
  start?: InjectedStartOptions | false
}

/** How the installed msw provides its worker script. */
export interface WorkerSource {
  /** `msw/vite` (msw 3 and later) or the bare file (msw 2). */
  kind: 'msw/vite' | 'file'
  /** The worker script on disk. */
  path: string
  /** msw's version. */
  version: string
}

/**
 * A Vite plugin for development: serves the installed msw's
 * `mockServiceWorker.js` at the app's base URL and starts the sandbox in the
 * page. It applies to `vite` / `vite dev` only, so a production build carries
 * neither the worker script nor the sandbox.
 *
 * @example
 * // vite.config.ts
 * import { defineConfig } from 'vite'
 * import { sandbox } from 'customer-token-sandbox/vite'
 *
 * export default defineConfig({ plugins: [sandbox()] })
 * @see https://vite.dev/guide/api-plugin
 */
export function sandbox(options: SandboxPluginOptions = {}): Plugin {
  const { start = {} } = options
  let workerUrl = `/${WORKER_FILENAME}`
  let source: WorkerSource | undefined
  // msw 3's own plugin, in worker-only mode, when the installed msw has one.
  let delegate: Plugin | undefined

  return {
    name: 'customer-token-sandbox',
    apply: 'serve',
    config() {
      // @note Pre-bundled up front: found only when the page first asks for
      // it, it would make Vite optimize it then and reload the page.
      if (start !== false) return { optimizeDeps: { include: [BROWSER_ENTRY] } }
    },
    async configResolved(config) {
      const base =
        config.base === './' || config.base === ''
          ? '/'
          : new URL(config.base, 'http://localhost').pathname
      workerUrl = `${base}${WORKER_FILENAME}`
      source = resolveWorkerSource(config.root)
      if (source.kind === 'msw/vite') {
        const entry = createRequire(source.path).resolve('msw/vite')
        const { msw } = (await import(pathToFileURL(entry).href)) as {
          msw: (options: { mode: 'worker-only' }) => Plugin
        }
        delegate = msw({ mode: 'worker-only' })
        await callHook(delegate.configResolved, config)
      }
    },
    async configureServer(server) {
      if (delegate) {
        await callHook(delegate.configureServer, server)
        return
      }
      const script = await readFile(source!.path, 'utf8')
      server.middlewares.use((request, response, next) => {
        const { pathname } = new URL(request.url ?? '/', 'http://localhost')
        if (pathname !== workerUrl) return next()
        response.writeHead(200, {
          'content-type': 'text/javascript; charset=utf-8',
          'cache-control': 'no-cache',
          'service-worker-allowed': '/',
        })
        response.end(script)
      })
    },
    transformIndexHtml: {
      order: 'pre',
      handler(html) {
        if (start === false) return html
        return injectStart(html, {
          ...start,
          serviceWorker: { url: workerUrl },
        })
      },
    },
  }
}

/**
 * Finds the msw a project at `root` has installed (falling back to the one
 * beside this package) and how it ships its worker script.
 *
 * @example
 * resolveWorkerSource(process.cwd()) // { kind: 'file', path: '…/msw/lib/mockServiceWorker.js', version: '2.15.0' }
 */
export function resolveWorkerSource(root: string): WorkerSource {
  const manifest = resolveFrom(root, 'msw/package.json')
  if (manifest === undefined) {
    throw new Error(
      `Failed to serve the MSW worker script: msw is not installed in ${root}. Install it with \`npm install --save-dev msw\`.`,
    )
  }
  // @note The rest is resolved from that msw itself, never a second copy.
  const require = createRequire(manifest)
  const { version } = require('./package.json') as { version: string }
  const subpath = (id: string): string | undefined => {
    try {
      return require.resolve(id)
    } catch {
      return undefined
    }
  }
  return {
    kind: subpath('msw/vite') === undefined ? 'file' : 'msw/vite',
    path:
      subpath(`msw/${WORKER_FILENAME}`) ??
      join(dirname(manifest), 'lib', WORKER_FILENAME),
    version,
  }
}

/** Resolves `id` from the project at `root`, else from beside this package. */
function resolveFrom(root: string, id: string): string | undefined {
  for (const from of [join(root, 'package.json'), import.meta.url]) {
    try {
      return createRequire(from).resolve(id)
    } catch {
      // Not there: try the next place.
    }
  }
  return undefined
}

type Hook<A> = ((this: never, arg: A) => unknown) | { handler: Hook<A> }

async function callHook<A extends ResolvedConfig | ViteDevServer>(
  hook: unknown,
  arg: A,
): Promise<void> {
  const fn = (
    typeof hook === 'object' && hook !== null && 'handler' in hook
      ? hook.handler
      : hook
  ) as Hook<A> | undefined
  if (typeof fn === 'function') await (fn as (arg: A) => unknown)(arg)
}

const MODULE_SCRIPT =
  /<script\b(?=[^>]*\btype\s*=\s*["']?module\b)(?=[^>]*\bsrc\s*=\s*["']([^"']+)["'])[^>]*>\s*<\/script>/gi

/**
 * Puts one inline module in place of the page's module scripts: it starts
 * the sandbox, then imports each of them in their order.
 */
export function injectStart(
  html: string,
  options: StartSandboxWorkerOptions,
): string {
  const entries: string[] = []
  const stripped = html.replace(MODULE_SCRIPT, (tag, src: string) => {
    entries.push(src)
    return entries.length === 1 ? '<!--customer-token-sandbox-->' : ''
  })
  const script = [
    '<script type="module">',
    `import { startSandboxWorker } from ${JSON.stringify(BROWSER_ENTRY)}`,
    // `<` escaped, so no value can close the script element.
    `await startSandboxWorker(${JSON.stringify(options).replaceAll('<', '\\u003c')})`,
    ...entries.map((src) => `await import(${JSON.stringify(src)})`),
    '</script>',
  ].join('\n')
  if (entries.length > 0)
    return stripped.replace('<!--customer-token-sandbox-->', script)
  return /<\/head>/i.test(html)
    ? html.replace(/<\/head>/i, `${script}\n</head>`)
    : `${script}\n${html}`
}
