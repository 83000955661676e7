import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'

// A 422 of the sandbox's own API says what the field takes, as those of the
// API's operations do: the bounds of a number, the pattern of a name.

const post = async (
  path: string,
  body: unknown,
): Promise<{ status: number; messages: string[]; codes: string[] }> => {
  const sandbox = createSandbox({ seed: 1 })
  const response = await sandbox.fetch(
    new Request(`http://localhost${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  )
  const problem = (await response.json()) as {
    errors: { message: string; code: string }[]
  }
  return {
    status: response.status,
    messages: problem.errors.map((error) => error.message),
    codes: problem.errors.map((error) => error.code),
  }
}

it.each([
  [{ operation: 'createCustomer', status: 200 }, 'status must be at least 400'],
  [{ operation: 'createCustomer', status: 600 }, 'status must be at most 599'],
  [{ operation: 'createCustomer', times: 0 }, 'times must be at least 1'],
  [{ operation: 'createCustomer', times: 5000 }, 'times must be at most 1000'],
  [
    { operation: 'createCustomer', delay_ms: -5 },
    'delay_ms must be at least 0',
  ],
])(
  'names the bound that POST /__sandbox/scenarios %j is out of',
  async (body, message) => {
    const answer = await post('/__sandbox/scenarios', body)
    expect(answer.status).toBe(422)
    expect(answer.codes).toEqual(['out_of_range'])
    expect(answer.messages).toEqual([message])
  },
)

it('gives the pattern of a snapshot name instead of "regex format"', async () => {
  const answer = await post('/__sandbox/snapshots', { name: 'my snapshot' })
  expect(answer.status).toBe(422)
  expect(answer.messages).toEqual([
    'name must match /^[\\w.-]{1,64}$/, not "my snapshot"',
  ])
})

it('names the bounds of a reset seed', async () => {
  const answer = await post('/__sandbox/reset', { seed: -1 })
  expect(answer.status).toBe(422)
  expect(answer.messages).toEqual(['seed must be at least 0'])
})
