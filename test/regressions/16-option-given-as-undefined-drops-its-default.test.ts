import { expect, it } from 'vitest'
import { DEFAULTS } from '../../src/defaults.ts'
import { createSandbox } from '../../src/runtimes/create-sandbox.ts'
import { postThrough } from '../_targets.ts'

// Options built from the environment (`records: env.RECORDS ? Number(…) :
// undefined`) gave nested options as `undefined`, and the spread that merged
// them over the defaults set them to `undefined`: `limits.records` then let
// every create through and `nameLength.min` accepted an empty name, with the
// sandbox's state still naming the defaults.

it('keeps the default of a nested option given as undefined', async () => {
  const sandbox = createSandbox({
    seed: 1,
    customersPerAccount: 0,
    limits: { customersPerAccount: 1, records: undefined },
    nameLength: { min: undefined, max: 50 },
    idempotency: { ttlSeconds: undefined },
    expiresIn: { max: undefined },
  })
  await sandbox.ready
  expect(sandbox.options.limits.records).toBe(DEFAULTS.limits.records)
  expect(sandbox.options.nameLength).toEqual({
    min: DEFAULTS.nameLength.min,
    max: 50,
  })
  expect(sandbox.options.idempotency).toEqual(DEFAULTS.idempotency)
  expect(sandbox.options.expiresIn).toEqual(DEFAULTS.expiresIn)

  const empty = await postThrough(sandbox, '/v1/customers', {
    name: '',
    email: 'ada@example.com',
  })
  expect(empty.status).toBe(422)
  expect(sandbox.customers.count()).toBe(0)
})

it('keeps the default of a top-level option given as undefined', async () => {
  const sandbox = createSandbox({ seed: undefined, journalLimit: undefined })
  await sandbox.ready
  expect(sandbox.options.seed).toBe(DEFAULTS.seed)
  expect(sandbox.options.journalLimit).toBe(DEFAULTS.journalLimit)
})
