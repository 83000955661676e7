import { expect, it, vi } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { postCustomer } from '../_requests.ts'

// Found by using the sandbox as a consumer does: a logger passed as
// `onRequest` that threw made `sandbox.fetch` reject (and msw's handler
// fail), though the customer was stored and the journal said 201: the
// caller saw a failure, and a retry created the customer twice. The
// sandbox now says on stderr that the logger failed and answers.

it('answers a create whose onRequest logger throws, and stores it once', async () => {
  const said = vi.spyOn(console, 'error').mockImplementation(() => {})
  const sandbox = createSandbox({
    seed: 1,
    customersPerAccount: 0,
    onRequest: () => {
      throw new Error('the log is full')
    },
  })
  const created = await postCustomer(
    'https://api.example.test',
    { name: 'Ada', email: 'ada@example.com' },
    { fetch: sandbox.fetch },
  )
  expect(created.status).toBe(201)
  expect(sandbox.customers.list().map((c) => c.name)).toEqual(['Ada'])
  expect(sandbox.journal.list()[0]).toMatchObject({ status: 201 })
  expect(said).toHaveBeenCalledWith(expect.stringContaining('the log is full'))
  said.mockRestore()
})
