import { defineConfig } from 'vite'
import { sandbox } from 'customer-token-sandbox/vite'

export default defineConfig(({ mode }) => ({
  // In `vite` (dev), the sandbox answers the API in the page; `vite build`
  // leaves it out, and `vite build --mode demo` keeps it, for a demo with no
  // backend.
  plugins: [sandbox({ demo: mode === 'demo' })],
}))
