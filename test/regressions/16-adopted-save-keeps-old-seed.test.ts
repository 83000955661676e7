import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { createSandboxCore } from '../../src/sandbox-core.ts'
import { postThrough } from '../_targets.ts'

// A browser tab that took in another tab's save (adopt) got its records but
// kept its own seed: state() and export() named a seed the data was not
// made from, and new account names followed the old one.

it("takes the saved data's seed with another copy's save, keeping its own journal", async () => {
  const saver = createSandboxCore({ seed: 7 })
  const taker = createSandboxCore({ seed: 1 })
  await Promise.all([saver.sandbox.ready, taker.sandbox.ready])
  const made = await postThrough(
    taker.sandbox,
    '/v1/customers',
    { name: 'Ada', email: 'ada@example.com' },
    DEMO_KEY_ONE,
  )
  expect(made.status).toBe(201)

  await taker.adopt(saver.sandbox.dump())
  expect(taker.sandbox.state().seed).toBe(7)
  expect(taker.sandbox.state().customers).toEqual(
    saver.sandbox.state().customers,
  )
  expect(taker.sandbox.journal.last()).toMatchObject({ status: 201 })
})
