import { gzipSync } from 'node:zlib'
import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { DEMO_KEY_ONE } from '../../src/fixtures.ts'

const body = JSON.stringify({ name: 'Ada', email: 'ada@example.com' })

const create = (encoding: string, payload: BodyInit): Request =>
  new Request('http://localhost/v1/customers', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
      'content-encoding': encoding,
    },
    body: payload,
  })

it('refuses a gzip-compressed body with 415 saying to send it uncompressed, not "not valid UTF-8"', async () => {
  const sandbox = createSandbox({ seed: 1, customersPerAccount: 0 })
  const response = await sandbox.fetch(create('gzip', gzipSync(body)))
  expect(response.status).toBe(415)
  const problem = (await response.json()) as { code: string; detail: string }
  expect(problem.code).toBe('unsupported_media_type')
  expect(problem.detail).toMatch(/Content-Encoding: gzip.*uncompressed/)
  expect(sandbox.customers.list()).toHaveLength(0)
})

it('reads a body sent with Content-Encoding: identity', async () => {
  const sandbox = createSandbox({ seed: 1 })
  const response = await sandbox.fetch(create('identity', body))
  expect(response.status).toBe(201)
})
