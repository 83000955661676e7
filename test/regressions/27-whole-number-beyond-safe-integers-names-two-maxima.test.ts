import { expect, it } from 'vitest'
import { send, targets } from '../_targets.ts'

// `POST /__sandbox/reset` with {"seed":1e300} answered "2 problems: seed
// must be at most 9007199254740991; seed must be at most 4294967295": z.int()
// bounds a number to the safe integers besides the field's own .max(), and
// both were reported. Every bounded whole number of a body did the same.

it.each([
  [
    '/__sandbox/reset',
    { seed: 1e300 },
    'seed',
    'seed must be at most 4294967295',
  ],
  [
    '/__sandbox/reset',
    { seed: 2 ** 53 },
    'seed',
    'seed must be at most 4294967295',
  ],
  [
    '/__sandbox/latency',
    { min_ms: -1e300, max_ms: 0 },
    'min_ms',
    'min_ms must be at least 0',
  ],
  [
    '/__sandbox/scenarios',
    { operation: '*', times: 1e300 },
    'times',
    'times must be at most 1000',
  ],
])(
  "answers POST %s %j with one problem naming the field's own bound",
  async (path, body, field, message) => {
    const client = await targets[0]!.start()
    const result = await send(client, 'POST', path, { body })
    expect(result.status).toBe(422)
    expect(result.body.errors).toEqual([
      expect.objectContaining({ field, code: 'out_of_range', message }),
    ])
    expect(result.body.detail).toBe(message)
    await client.close()
  },
)

it('still names the safe-integer bound of a whole number with no bound of its own', async () => {
  const client = await targets[0]!.start()
  const result = await send(client, 'POST', '/__sandbox/clock', {
    body: { advance_seconds: 1e300 },
  })
  expect(result.status).toBe(422)
  expect(result.body.errors).toHaveLength(1)
  await client.close()
})
