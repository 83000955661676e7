import { expect, it } from 'vitest'
import { PERSONA_READ_ONLY_KEY } from '../../fixtures/demo-keys.ts'
import { send, targets, useClients, type SendOptions } from '../_targets.ts'

// A queued delay ("the next call waits") was spent by a call that was
// refused before the operation ran (400 invalid JSON, 403, 415, 429) or
// answered by an idempotent replay: that answer came at once, the scenario
// was gone and the journal still said `delay_ms=…`. The refusal now waits
// as asked, as a 422 and a 201 already did.

const DELAY_MS = 1500
const customer = { name: 'Ada', email: 'ada@example.com' }

/**
 * Whether the delayed call settles after plain calls sent one by one just
 * after it: an order, not a duration, so a slow machine cannot make it flaky.
 */
async function settlesAfterAPlainCall(
  delayed: () => Promise<{ status: number }>,
  plain: () => Promise<{ status: number }>,
): Promise<{ order: string[]; status: number }> {
  const order: string[] = []
  const first = delayed().then((answer) => {
    order.push('delayed')
    return answer
  })
  for (let i = 0; i < 5; i++) await plain()
  order.push('plain')
  const { status } = await first
  return { order, status }
}

const REFUSALS: [string, number, SendOptions][] = [
  ['invalid JSON', 400, { body: '{' }],
  [
    'a form body',
    415,
    {
      body: 'name=Ada',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    },
  ],
  [
    'a key without customers:write',
    403,
    {
      body: customer,
      key: PERSONA_READ_ONLY_KEY,
    },
  ],
]

for (const target of targets) {
  const start = useClients(target)

  for (const [label, expected, options] of REFUSALS) {
    it(`delays a ${expected} (${label}) that takes a queued delay (${target.name})`, async () => {
      const client = await start()
      client.sandbox.scenarios.next('createCustomer', { delayMs: DELAY_MS })
      const { order, status } = await settlesAfterAPlainCall(
        () => send(client, 'POST', '/v1/customers', options),
        () => send(client, 'GET', '/__sandbox/health'),
      )
      expect(status).toBe(expected)
      expect(order).toEqual(['plain', 'delayed'])
      expect(client.sandbox.journal.last()).toMatchObject({
        status: expected,
        scenario: `delay_ms=${DELAY_MS}`,
      })
    })
  }

  it(`delays a 429 that takes an X-Sandbox-Scenario delay (${target.name})`, async () => {
    const client = await start({ rateLimit: { limit: 1, windowSeconds: 60 } })
    client.sandbox.clock.set(new Date('2030-01-01T00:00:00.000Z'))
    await send(client, 'POST', '/v1/customers', { body: customer })
    const { order, status } = await settlesAfterAPlainCall(
      () =>
        send(client, 'POST', '/v1/customers', {
          body: customer,
          headers: { 'x-sandbox-scenario': `delay_ms=${DELAY_MS}` },
        }),
      () => send(client, 'GET', '/__sandbox/health'),
    )
    expect(status).toBe(429)
    expect(order).toEqual(['plain', 'delayed'])
  })

  it(`delays an idempotent replay that takes a queued delay (${target.name})`, async () => {
    const client = await start()
    const options = { body: customer, headers: { 'idempotency-key': 'k-1' } }
    await send(client, 'POST', '/v1/customers', options)
    client.sandbox.scenarios.next('createCustomer', { delayMs: DELAY_MS })
    const { order, status } = await settlesAfterAPlainCall(
      () => send(client, 'POST', '/v1/customers', options),
      () => send(client, 'GET', '/__sandbox/health'),
    )
    expect(status).toBe(201)
    expect(order).toEqual(['plain', 'delayed'])
    expect(client.sandbox.journal.last()).toMatchObject({ replayed: true })
  })
}
