import { describe, expectTypeOf, it } from 'vitest'
import type { JournalEntry } from '../../src/index.ts'
import {
  sandboxGlobalSetup,
  test as sandboxTest,
  type SandboxFixture,
} from '../../src/runtimes/playwright.ts'

describe('customer-token-sandbox/playwright', () => {
  it('gives each test a typed sandbox fixture beside Playwright’s own', () => {
    sandboxTest('typed', async ({ sandbox, request }) => {
      expectTypeOf(sandbox).toEqualTypeOf<SandboxFixture>()
      expectTypeOf(sandbox.key).toEqualTypeOf<string>()
      expectTypeOf(sandbox.clock.advance).returns.toEqualTypeOf<Promise<Date>>()
      expectTypeOf(sandbox.journal.last).returns.toEqualTypeOf<
        Promise<JournalEntry | undefined>
      >()
      expectTypeOf(request.post).toBeFunction()
      // @ts-expect-error: operations are a closed set
      await sandbox.scenarios.next('deleteCustomer', { status: 503 })
    })
  })
  it('takes the server options in the global set-up and the config', () => {
    expectTypeOf(sandboxGlobalSetup)
      .parameter(0)
      .toMatchTypeOf<{ seed?: number; port?: number } | undefined>()
    // Checked, not run: the config takes the server's URL as an option.
    const configure = (use: typeof sandboxTest.use) =>
      use({ sandboxUrl: 'http://127.0.0.1:4100' })
    expectTypeOf(configure).toBeFunction()
  })
})
