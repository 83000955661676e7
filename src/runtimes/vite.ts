// The Vite plugin: the sandbox in the dev server and in a demo build.
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Plugin, ResolvedConfig, ViteDevServer } from 'vite'
import { z } from 'zod'
import type { StartSandboxWorkerOptions } from './browser.ts'
import { describeOptionsIssue, showValue } from '../option-messages.ts'
import type { OptionsSchema } from '../options.ts'

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
   * Starts the sandbox in every page with these options. The page's own
   * scripts keep their order and timing; its `fetch` and `XMLHttpRequest`
   * calls wait until the sandbox answers, so the app's first request is
   * already the sandbox's. `false` only serves the worker script and leaves
   * `startSandboxWorker()` to your code.
   * @default {}
   * @example sandbox({ start: { persist: true, seed: 7 } })
   * @example sandbox({ start: false })
   */
  start?: InjectedStartOptions | false
  /**
   * Also applies to `vite build`: emits the worker script and starts the
   * sandbox in the built pages, for a demo that needs no backend. Off, a
   * build carries neither the worker script nor the sandbox.
   * @default false
   * @example sandbox({ demo: process.env.DEMO === '1' })
   */
  demo?: boolean
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
 * neither the worker script nor the sandbox, unless `demo` asks for both.
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
  checkPluginOptions(options)
  const { start = {}, demo = false } = options
  let workerUrl = `/${WORKER_FILENAME}`
  let relativeBuild = false
  let source: WorkerSource | undefined
  // msw 3's own plugin, in worker-only mode, when the installed msw has one.
  let delegate: Plugin | undefined

  return {
    name: 'customer-token-sandbox',
    apply: (_config, env) => env.command === 'serve' || demo,
    config() {
      // @note Pre-bundled up front: found only when the page first asks for
      // it, it would make Vite optimize it then and reload the page.
      if (start !== false) return { optimizeDeps: { include: [BROWSER_ENTRY] } }
    },
    async configResolved(config) {
      const copies = config.plugins.filter(
        (plugin) => plugin.name === 'customer-token-sandbox',
      ).length
      if (copies > 1) {
        // @note Each copy would start a sandbox and hold the page's requests
        // until its own start, which the other copy's gate never sees: every
        // request of the page would wait forever.
        throw new Error(
          `${PLUGIN} is in the Vite config ${copies} times; keep one (check the configs merged into this one).`,
        )
      }
      if (start !== false) await checkStartOptions(start)
      const relative = config.base === './' || config.base === ''
      // @note A relative base builds pages that may be served under any
      // path: each page finds the worker script beside it, not at `/`.
      relativeBuild = relative && config.command === 'build'
      const base = relative
        ? '/'
        : new URL(config.base, 'http://localhost').pathname
      workerUrl = `${base}${WORKER_FILENAME}`
      source = resolveWorkerSource(config.root)
      if (config.command === 'serve' && source.kind === 'msw/vite') {
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
    async generateBundle() {
      // A demo build (`demo: true`): the worker script beside the pages.
      this.emitFile({
        type: 'asset',
        fileName: WORKER_FILENAME,
        source: await readFile(source!.path, 'utf8'),
      })
    },
    transformIndexHtml: {
      order: 'pre',
      handler(html, { path }) {
        if (start === false) return html
        // The page's folder below the build's root: `/about/index.html` is one.
        const depth = path.split('/').length - 2
        return injectStart(html, {
          ...start,
          serviceWorker: {
            url: relativeBuild
              ? `${'../'.repeat(depth) || './'}${WORKER_FILENAME}`
              : workerUrl,
          },
        })
      },
    },
  }
}

const PLUGIN = 'sandbox() from customer-token-sandbox/vite'
const ACTION = `set up ${PLUGIN}`

/** A schema's error: what the value must be, and what it was. */
const mustBe = (what: string) => ({
  error: (issue: { input?: unknown }) =>
    `must be ${what}, not ${showValue(issue.input)}`,
})

const PluginOptionsSchema = z.strictObject(
  {
    start: z
      .union(
        [z.literal(false), z.looseObject({})],
        mustBe('false or an object of startSandboxWorker() options'),
      )
      .optional(),
    demo: z.boolean(mustBe('true or false')).optional(),
  },
  {
    error: (issue) =>
      issue.code === 'invalid_type'
        ? `must be an object such as { start: { seed: 7 } }, not ${showValue(issue.input)}`
        : undefined,
  },
)

/** Refuses options the plugin would otherwise drop without a word. */
function checkPluginOptions(options: unknown): void {
  const parsed = PluginOptionsSchema.safeParse(options)
  if (parsed.success) return
  const [issue] = parsed.error.issues
  // The likeliest mistake: the sandbox's options beside start, not in it.
  const hint =
    issue?.code === 'unrecognized_keys'
      ? ` The plugin takes start and demo; the sandbox's own options go under start, as in sandbox({ start: { ${issue.keys[0]}: … } }).`
      : ''
  throw new TypeError(
    `${describeOptionsIssue(parsed.error, ACTION, 'SandboxPluginOptions')}${hint}`,
  )
}

/**
 * The options the page may start the sandbox with: the sandbox's own, whose
 * schema is loaded with them, and the worker's, but only what survives
 * JSON on its way into the page.
 */
function startOptionsSchema(sandboxOptions: typeof OptionsSchema) {
  // @note A function would vanish in JSON.stringify and the page would
  // start without it, so each callback is refused with where it can go.
  const pageOnly = (name: string) =>
    z.never({
      error: (issue) =>
        `${typeof issue.input === 'function' ? 'is a function' : 'takes a function'}, which cannot be passed to the page; use sandbox({ start: false }) and call startSandboxWorker({ ${name} }) in the page's own code`,
    })
  return sandboxOptions
    .extend({
      persist: z.union(
        [z.boolean(), z.string()],
        mustBe('true, false or a storage key'),
      ),
      quiet: z.boolean(mustBe('true or false')),
      onUnhandledRequest: z.enum(
        ['bypass', 'warn', 'error'],
        mustBe('one of "bypass", "warn", "error"'),
      ),
      serviceWorker: z.never({
        error:
          'is set by the plugin, which serves the worker script at the base URL; use sandbox({ start: false }) to start the worker yourself',
      }),
      errorFormat: pageOnly('errorFormat'),
      onRequest: pageOnly('onRequest'),
      onSeedProgress: pageOnly('onSeedProgress'),
    })
    .partial()
}

/**
 * Checks the options the page will start the sandbox with, so that a mistake
 * stops `vite` with its reason rather than only failing in the browser.
 */
async function checkStartOptions(start: object): Promise<void> {
  // Loaded here: the sandbox's options are needed only once the plugin runs.
  const { OptionsSchema, resolveOptions } = await import('../options.ts')
  // Parsed under its name, so that each issue's path starts with "start".
  const parsed = z
    .object({ start: startOptionsSchema(OptionsSchema) })
    .safeParse({ start })
  if (!parsed.success) {
    throw new TypeError(
      describeOptionsIssue(parsed.error, ACTION, 'StartSandboxWorkerOptions'),
    )
  }
  const {
    persist: _persist,
    quiet: _quiet,
    onUnhandledRequest: _onUnhandledRequest,
    ...options
  } = parsed.data.start
  // What no schema says: bounds that contradict each other.
  try {
    resolveOptions(options)
  } catch (error) {
    throw new TypeError(
      `Failed to ${ACTION}: in "start", ${(error as Error).message.replace(/^Failed to create a sandbox: /, '')}`,
      { cause: error },
    )
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

// The global through which the start module opens the gate.
const READY = 'customer-token-sandbox:ready'

// A classic script, so it runs before any module of the page: until the
// sandbox answers, the page's fetch and XMLHttpRequest calls wait for it.
const GATE = `(() => {
  let open
  const ready = new Promise((resolve) => { open = resolve })
  window[Symbol.for(${JSON.stringify(READY)})] = open
  const fetch = window.fetch
  window.fetch = function (...args) { return ready.then(() => fetch.apply(this, args)) }
  const send = XMLHttpRequest.prototype.send
  XMLHttpRequest.prototype.send = function (...args) { ready.then(() => send.apply(this, args)) }
})()`

const MODULE_SCRIPT = /<script\b(?=[^>]*\btype\s*=\s*["']?module\b)[^>]*>/i

/**
 * Adds the sandbox's start to a page and leaves the page's own scripts as
 * they were: a classic script at the top of `<head>` holds the page's
 * requests, and a module placed before the page's first module starts the
 * sandbox and then lets them go. An app that waits for `DOMContentLoaded` or
 * `load` still sees them, and its first request is answered by the sandbox.
 *
 * @example
 * injectStart('<head></head><body><script type="module" src="/main.ts"></script></body>', { seed: 7 })
 */
export function injectStart(
  html: string,
  options: StartSandboxWorkerOptions,
): string {
  const start = [
    '<script type="module">',
    `import { startSandboxWorker } from ${JSON.stringify(BROWSER_ENTRY)}`,
    `const open = window[Symbol.for(${JSON.stringify(READY)})]`,
    // `<` escaped, so no value can close the script element.
    `startSandboxWorker(${JSON.stringify(options).replaceAll('<', '\\u003c')}).then(open, (error) => {`,
    `  console.error('[customer-token-sandbox] The sandbox did not start; requests go to the network.', error)`,
    '  open()',
    '})',
    '</script>',
  ].join('\n')
  const gate = `<script>${GATE}</script>`
  const head = /<head\b[^>]*>/i.exec(html)
  let out =
    head === null
      ? `${gate}\n${html}`
      : `${html.slice(0, head.index + head[0].length)}\n${gate}${html.slice(head.index + head[0].length)}`
  const first = MODULE_SCRIPT.exec(out)
  if (first !== null) {
    return `${out.slice(0, first.index)}${start}\n${out.slice(first.index)}`
  }
  out = /<\/head>/i.test(out)
    ? out.replace(/<\/head>/i, `${start}\n</head>`)
    : `${out}\n${start}`
  return out
}
