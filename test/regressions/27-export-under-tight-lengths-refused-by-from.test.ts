import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import type { SandboxOptions } from '../../src/options.ts'
import { postCustomer } from '../_requests.ts'

// Found by using the sandbox as a consumer does: the seed made names and
// emails as faker gave them, whatever `nameLength` and `emailMaxLength`
// said, so a sandbox under tight bounds (as `verify --write-config` may
// write them from a real service) held customers no call could have made,
// and its own export was refused by `from` ("data.customers.4.email: it
// is 34 characters long, more than emailMaxLength (32)"). The seed keeps
// to the bounds now.

it.each<[string, SandboxOptions]>([
  ['emailMaxLength 20', { emailMaxLength: 20 }],
  ['nameLength.max 5', { nameLength: { min: 1, max: 5 } }],
  ['nameLength.min 30', { nameLength: { min: 30, max: 40 } }],
])(
  'seeds within %s, so that its export starts a sandbox again',
  async (_, bounds) => {
    const options = { seed: 7, customersPerAccount: 200, ...bounds }
    const sandbox = createSandbox(options)
    await sandbox.ready
    const session = JSON.parse(JSON.stringify(sandbox.export()))
    const again = createSandbox({ from: session })
    await again.ready
    expect(again.customers.list()).toEqual(sandbox.customers.list())

    // Every seeded customer is one a call could have made: the API takes
    // its name and email under the same options.
    const customers = sandbox.customers.list()
    expect(new Set(customers.map((c) => c.email?.toLowerCase())).size).toBe(
      customers.length,
    )
    for (const { name, email } of customers.slice(0, 40)) {
      const created = await postCustomer(
        'https://api.example.test',
        { name, email },
        { fetch: sandbox.fetch },
      )
      expect(created.status, await created.clone().text()).toBe(201)
    }
  },
)
