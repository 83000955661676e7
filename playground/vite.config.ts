import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { defineConfig, type Plugin } from 'vite'
import { resolveWorkerSource, sandbox } from '../src/runtimes/vite.ts'

const root = fileURLToPath(new URL('.', import.meta.url))

/** The built playground carries the worker script: `sandbox()` serves it in dev only. */
const emitWorker = (): Plugin => ({
  name: 'playground:worker-script',
  apply: 'build',
  async generateBundle() {
    this.emitFile({
      type: 'asset',
      fileName: 'mockServiceWorker.js',
      source: await readFile(resolveWorkerSource(root).path, 'utf8'),
    })
  },
})

// `npm run build:playground` builds it into dist/playground, which the
// standalone server serves at `/`; `npx vite playground` runs it in dev.
export default defineConfig({
  root,
  base: './',
  plugins: [sandbox({ start: false }), emitWorker()],
  build: {
    outDir: '../dist/playground',
    emptyOutDir: true,
    target: 'es2022',
    // @note The page mode's in-page sandbox is one lazy chunk of about
    // 520 KB minified (msw, faker's class and names, zod, @msw/data), loaded
    // only in `?mode=page`; the server mode loads about 16 KB. Splitting it
    // would not load less: page mode needs all of it at once.
    chunkSizeWarningLimit: 600,
  },
})
