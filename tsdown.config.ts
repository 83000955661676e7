import { defineConfig } from 'tsdown'

export default defineConfig([
  {
    entry: { index: 'src/index.ts', node: 'src/node.ts' },
    format: 'esm',
    platform: 'neutral',
    dts: true,
    deps: { neverBundle: ['msw', /^node:/] },
  },
  {
    // The CLI is one self-contained file: bundling lets tree-shaking drop the
    // parts of its dependencies it never runs, which halves its start-up.
    entry: { bin: 'src/bin.ts' },
    format: 'esm',
    platform: 'node',
    fixedExtension: false,
    dts: false,
    deps: { alwaysBundle: [/.*/], neverBundle: [/^node:/] },
  },
])
