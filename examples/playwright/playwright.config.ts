import { defineConfig } from '@playwright/test'

export default defineConfig({
  testDir: '.',
  globalSetup: './global-setup.ts',
  // Four tests at once against one server: each has its own account, clock,
  // faults and journal. The tests use the `request` fixture: no browser.
  workers: 4,
  fullyParallel: true,
  timeout: 90_000,
})
