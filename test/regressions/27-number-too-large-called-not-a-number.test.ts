import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'

// A number too large for a double (1e400, read as Infinity) was refused
// with "seed must be a number, not a number". The message now says why.

const post = (path: string, body: string) =>
  new Request(`http://localhost${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  })

it('says that a number too large to read is too large, whatever the field', async () => {
  const sandbox = createSandbox({ seed: 1, customersPerAccount: 0 })
  for (const request of [
    post('/__sandbox/reset', '{"seed":1e400}'),
    post('/__sandbox/latency', '{"min_ms":0,"max_ms":1e400}'),
  ]) {
    const response = await sandbox.fetch(request)
    expect(response.status).toBe(422)
    const { detail } = (await response.json()) as { detail: string }
    expect(detail).toMatch(/must be a number, not a number too large to read/)
  }
})
