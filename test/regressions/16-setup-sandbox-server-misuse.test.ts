import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { setupSandboxServer } from '../../src/runtimes/node-entry.ts'

// setupSandboxServer({ onUnhandled: 'error' }) (the sandbox left out) threw
// "sandbox.handlers is not iterable", and a misspelt onUnhandled was taken
// without a word, then failed each unmatched request with msw's message
// about an unknown strategy.

it('says to pass the sandbox when the first argument is not one', () => {
  for (const wrong of [undefined, { onUnhandled: 'error' }]) {
    expect(() => setupSandboxServer(wrong as never)).toThrow(
      "Failed to set up the sandbox server: its first argument must be the sandbox that createSandbox() returned, as in setupSandboxServer(createSandbox(), { onUnhandled: 'error' }).",
    )
  }
})

it('refuses an onUnhandled it does not know when it is set up', () => {
  const sandbox = createSandbox({ seed: 1 })
  expect(() =>
    setupSandboxServer(sandbox, { onUnhandled: 'warning' as never }),
  ).toThrow(
    'Failed to set up the sandbox server: onUnhandled must be "error", "warn" or "bypass" (got "warning").',
  )
})
