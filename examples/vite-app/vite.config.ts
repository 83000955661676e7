import { defineConfig } from 'vite'
import { sandbox } from 'customer-token-sandbox/vite'

export default defineConfig(({ mode }) => ({
  // In `vite` (dev), the sandbox answers the API in the page; `vite build`
  // leaves it out, and `vite build --mode demo` keeps it, for a demo with no
  // backend.
  plugins: [sandbox({ demo: mode === 'demo' })],
  // @note The demo's one chunk is the app plus the whole sandbox (msw, faker,
  // zod, @msw/data): about 815 KB minified, 285 KB gzip, loaded once for a
  // demo with no backend. Vite's 500 KB warning is for an app's own code,
  // which the production build (no sandbox) keeps to a few KB.
  build: { chunkSizeWarningLimit: mode === 'demo' ? 1000 : 500 },
}))
