import { afterEach, describe, expect, it } from 'vitest'
import { createSandbox } from '../src/index.ts'
import { send, targets, type Client } from './_targets.ts'

const customer = { name: 'Ada', email: 'ada@example.com' }

for (const target of targets) {
  describe(target.name, () => {
    let client: Client
    afterEach(() => client?.close())

    it('fails the next calls queued through sandbox.scenarios.next, then answers normally', async () => {
      client = await target.start({ seed: 1 })
      const queued = client.sandbox.scenarios.next('createCustomer', {
        status: 503,
        times: 2,
      })
      expect(queued).toMatchObject({
        operation: 'createCustomer',
        status: 503,
        remaining: 2,
      })
      // Another operation is untouched.
      expect(
        (
          await send(client, 'POST', '/v2/tokens', {
            body: { scopes: ['customers:read'] },
          })
        ).status,
      ).toBe(201)
      const statuses = []
      for (let i = 0; i < 3; i++)
        statuses.push(
          (await send(client, 'POST', '/v1/customers', { body: customer }))
            .status,
        )
      expect(statuses).toEqual([503, 503, 201])
      expect(client.sandbox.scenarios.list()).toEqual([])
    })

    it('authenticates first: a call without a credential is a 401 and leaves the scenario for the next one', async () => {
      client = await target.start({ seed: 1 })
      client.sandbox.scenarios.next('*', { status: 500 })
      const anonymous = await send(client, 'POST', '/v1/customers', {
        key: null,
        body: customer,
      })
      expect(anonymous.status).toBe(401)
      const header = await send(client, 'POST', '/v1/customers', {
        key: null,
        body: customer,
        headers: { 'x-sandbox-scenario': 'status=503' },
      })
      expect(header.status).toBe(401)
      const failed = await send(client, 'POST', '/v1/customers', {
        body: customer,
      })
      expect(failed.status).toBe(500)
      expect(failed.body).toMatchObject({
        code: 'simulated_failure',
        status: 500,
      })
      expect(failed.headers.get('retry-after')).toBeNull()
    })

    it('delays a call and still answers it, recording the scenario in the journal', async () => {
      client = await target.start({ seed: 1 })
      client.sandbox.scenarios.next('createToken', { delayMs: 20 })
      const minted = await send(client, 'POST', '/v2/tokens', {
        body: { scopes: ['customers:read'] },
      })
      expect(minted.status).toBe(201)
      expect(client.sandbox.journal.last()?.scenario).toBe('delay_ms=20')
    })

    it('makes fetch reject for a queued network error and records status 0', async () => {
      client = await target.start({ seed: 1 })
      client.sandbox.scenarios.next('createCustomer', { networkError: true })
      await expect(
        send(client, 'POST', '/v1/customers', { body: customer }),
      ).rejects.toThrow(TypeError)
      expect(client.sandbox.journal.last()).toMatchObject({
        status: 0,
        scenario: 'network_error',
      })
      expect(
        client.sandbox.customers.count({ accountId: 'acct_DemoAccount001' }),
      ).toBe(25)
    })
  })
}

it('refuses a scenario that would do nothing or could not be answered', () => {
  const { scenarios } = createSandbox()
  expect(() => scenarios.next('createCustomer', {})).toThrow(
    /give it a "status", a "delayMs" or "networkError: true"/,
  )
  expect(() => scenarios.next('createCustomer', { status: 200 })).toThrow(
    /400 to 599/,
  )
  expect(() => scenarios.next('createCustomer', { delayMs: -1 })).toThrow(
    RangeError,
  )
  expect(() =>
    scenarios.next('createCustomer', { status: 503, times: 0 }),
  ).toThrow(/at least 1/)
  expect(scenarios.list()).toEqual([])
})
