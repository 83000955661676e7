import { defineConfig } from 'tsdown'

export default defineConfig([
  {
    entry: {
      index: 'src/index.ts',
      fixtures: 'src/fixtures.ts',
      contract: 'src/contract.ts',
      node: 'src/runtimes/node-entry.ts',
      browser: 'src/runtimes/browser.ts',
      vite: 'src/runtimes/vite.ts',
      playwright: 'src/runtimes/playwright.ts',
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
    entry: { bin: 'src/cli/bin.ts' },
    format: 'esm',
    platform: 'node',
    fixedExtension: false,
    dts: false,
    clean: ['dist/*.*'],
    deps: { alwaysBundle: [/.*/], neverBundle: [/^node:/] },
  },
])
