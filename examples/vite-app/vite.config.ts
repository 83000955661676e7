import { defineConfig } from 'vite'
import { sandbox } from 'customer-token-sandbox/vite'

export default defineConfig({
  // In `vite` (dev), the sandbox answers the API in the page; `vite build` leaves it out.
  plugins: [sandbox()],
})
