import { defineConfig } from 'tsdown'

export default defineConfig([
  {
    entry: {
      index: 'src/index.ts',
      node: 'src/node-entry.ts',
      browser: 'src/browser.ts',
      vite: 'src/vite.ts',
      playwright: 'src/playwright.ts',
    },
    format: 'esm',
    platform: 'neutral',
    dts: true,
    deps: { neverBundle: ['msw', '@playwright/test', /^node:/] },
    // Top-level files only: dist/playground is Vite's (npm run build:playground).
    clean: ['dist/*.*'],
  },
  {
    // The CLI is one self-contained file: bundling lets tree-shaking drop the
    // parts of its dependencies it never runs, which halves its start-up.
    entry: { bin: 'src/bin.ts' },
    format: 'esm',
    platform: 'node',
    fixedExtension: false,
    dts: false,
    clean: ['dist/*.*'],
    deps: { alwaysBundle: [/.*/], neverBundle: [/^node:/] },
  },
])
