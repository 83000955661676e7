import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { postThrough } from '../_targets.ts'

// A field of the wrong type was "scopes must be a array, not a string", or
// "name must be a string, not a object".

it.each([
  [
    '/v2/tokens',
    { scopes: 'customers:read' },
    'scopes must be an array, not a string',
  ],
  [
    '/__sandbox/scenarios',
    { operation: '*', network_error: 'yes' },
    'network_error must be a boolean, not a string',
  ],
  [
    '/v1/customers',
    { name: {}, email: 'ada@example.com' },
    'name must be a string, not an object',
  ],
  [
    '/v1/customers',
    { name: ['Ada'], email: 'ada@example.com' },
    'name must be a string, not an array',
  ],
])('says "%s" %j with the right article', async (path, body, message) => {
  const sandbox = createSandbox({ seed: 1 })
  const response = await postThrough(sandbox, path, body)
  expect(response.status).toBe(422)
  const problem = await response.json()
  expect(
    problem.errors.map((error: { message: string }) => error.message),
  ).toEqual([message])
})
