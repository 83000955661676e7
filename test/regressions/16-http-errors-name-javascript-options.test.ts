import { expect, it } from 'vitest'
import { send, targets, useClients } from '../_targets.ts'

// Over HTTP a refused scenario or latency named the JavaScript API's options
// ("delayMs", "networkError: true", "min and max"), which no HTTP body or
// header takes: the caller was told to send fields the server rejects as
// unknown. Each answer now names what that surface takes.

const JAVASCRIPT_NAMES = /delayMs|networkError|\bmin and max\b/

for (const target of targets) {
  const start = useClients(target)

  it(`names the X-Sandbox-Scenario parameters in its refusals (${target.name})`, async () => {
    const client = await start()
    for (const [header, message] of [
      [
        'delay_ms=70000',
        'X-Sandbox-Scenario: delay_ms must be a whole number of milliseconds from 0 to 60000 (got 70000)',
      ],
      [
        ';',
        'X-Sandbox-Scenario: give it status=<400-599>, delay_ms=<0-60000> or network_error',
      ],
    ] as const) {
      const { status, body } = await send(client, 'POST', '/v1/customers', {
        body: { name: 'Ada', email: 'ada@example.com' },
        headers: { 'x-sandbox-scenario': header },
      })
      expect(status).toBe(422)
      expect(body.errors).toEqual([
        {
          field: 'X-Sandbox-Scenario',
          code: 'invalid_format',
          message,
        },
      ])
      expect(body.detail).not.toMatch(JAVASCRIPT_NAMES)
    }
  })

  for (const path of ['/__sandbox/scenarios', '/__sandbox/account/scenarios']) {
    it(`names the body's fields when POST ${path} asks for no effect (${target.name})`, async () => {
      const client = await start()
      const { status, body } = await send(client, 'POST', path, {
        body: { operation: '*', times: 2 },
      })
      expect(status).toBe(422)
      expect(body.errors).toEqual([
        {
          field: 'status',
          pointer: '/status',
          code: 'required',
          message:
            'A scenario needs an effect: send "status" (400 to 599), "delay_ms" (0 to 60000) or "network_error": true',
        },
      ])
      expect(body.detail).not.toMatch(JAVASCRIPT_NAMES)
      expect(client.sandbox.scenarios.list()).toEqual([])
    })
  }

  it(`names min_ms and max_ms when POST /__sandbox/latency has them crossed (${target.name})`, async () => {
    const client = await start()
    const { status, body } = await send(client, 'POST', '/__sandbox/latency', {
      body: { min_ms: 500, max_ms: 100 },
    })
    expect(status).toBe(422)
    expect(body.errors).toEqual([
      {
        field: 'min_ms',
        pointer: '/min_ms',
        code: 'out_of_range',
        message: 'min_ms (500) must not be above max_ms (100)',
      },
    ])
    expect(body.detail).not.toMatch(JAVASCRIPT_NAMES)
    expect(client.sandbox.scenarios.latency()).toBe(false)
  })
}
