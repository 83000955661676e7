import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'

// sandbox.fetch "takes what fetch takes", yet a request whose signal was
// aborted before the call was answered 201 and its customer stored, where
// fetch sends nothing and rejects with the signal's reason.

const init = (signal: AbortSignal): RequestInit => ({
  method: 'POST',
  headers: {
    authorization: `Bearer ${DEMO_KEY_ONE}`,
    'content-type': 'application/json',
  },
  body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
  signal,
})

it('rejects a request aborted before it is sent, as fetch does, and stores nothing', async () => {
  const sandbox = createSandbox({ seed: 1 })
  await sandbox.ready
  const count = sandbox.customers.count()
  const controller = new AbortController()
  controller.abort()
  await expect(
    sandbox.fetch('http://api.test/v1/customers', init(controller.signal)),
  ).rejects.toMatchObject({ name: 'AbortError' })
  const reason = new Error('the test is over')
  await expect(
    sandbox.fetch(
      new Request(
        'http://api.test/v1/customers',
        init(AbortSignal.abort(reason)),
      ),
    ),
  ).rejects.toBe(reason)
  expect(sandbox.customers.count()).toBe(count)
  expect(sandbox.journal.list()).toEqual([])
})
