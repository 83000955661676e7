import { defineConfig } from 'tsdown'

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    node: 'src/node.ts',
    bin: 'src/bin.ts',
  },
  format: 'esm',
  platform: 'neutral',
  dts: true,
  deps: { neverBundle: ['msw', /^node:/] },
})
