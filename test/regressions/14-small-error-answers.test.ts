import { expect, it } from 'vitest'
import { inProcess, send } from '../_targets.ts'

const FEW_KB = 8 * 1024

it('answers a 1 MB body of thousands of unknown fields with the first 20 and a count of the rest', async () => {
  const client = await inProcess.start()
  const body: Record<string, string> = {
    name: 'Ada',
    email: 'ada@example.com',
  }
  for (let i = 0; i < 35_000; i++) body[`field_${i}`] = 'x'.repeat(8)
  const sent = JSON.stringify(body)
  expect(sent.length).toBeGreaterThan(800_000)
  const result = await send(client, 'POST', '/v1/customers', { body: sent })
  expect(result.status).toBe(422)
  expect(result.body.errors).toHaveLength(20)
  expect(result.body.errors[0]).toMatchObject({
    field: 'field_0',
    code: 'unknown_field',
  })
  expect(result.body.errors_omitted).toBe(35_000 - 20)
  expect(result.body.detail).toMatch(/^35000 problems: /)
  expect(result.text.length).toBeLessThan(FEW_KB)
})

it('quotes a huge unknown field name in at most 100 characters, ending in an ellipsis', async () => {
  const client = await inProcess.start()
  const huge = 'k'.repeat(1_000_000)
  const result = await send(client, 'POST', '/v1/customers', {
    body: `{"name":"Ada","email":"ada@example.com","${huge}":1}`,
  })
  expect(result.status).toBe(422)
  const [error] = result.body.errors
  expect(error.code).toBe('unknown_field')
  expect(error.field).toHaveLength(100)
  expect(error.field.endsWith('…')).toBe(true)
  expect(error.pointer.length).toBeLessThanOrEqual(100)
  expect(result.text.length).toBeLessThan(FEW_KB)
})

it('quotes a huge invalid scope briefly', async () => {
  const client = await inProcess.start()
  const scope = `customers:${'r'.repeat(900_000)}`
  const result = await send(client, 'POST', '/v2/tokens', {
    body: { scopes: [scope] },
  })
  expect(result.status).toBe(422)
  expect(result.body.errors[0].field).toBe('scopes')
  expect(result.text.length).toBeLessThan(FEW_KB)
})

it('keeps the answer small when each of many fields has a huge wrong value', async () => {
  const client = await inProcess.start()
  const result = await send(client, 'POST', '/v1/customers', {
    body: { name: 'n'.repeat(500_000), email: `${'e'.repeat(500_000)}@x` },
  })
  expect(result.status).toBe(422)
  const fields = result.body.errors.map((e: { field: string }) => e.field)
  expect(fields).toContain('name')
  expect(fields).toContain('email')
  expect(result.text.length).toBeLessThan(FEW_KB)
})

it('quotes a 50,000-character path in a 404 briefly, under the API and under /__sandbox/', async () => {
  const client = await inProcess.start()
  for (const prefix of ['/v1/', '/__sandbox/']) {
    const result = await send(client, 'GET', `${prefix}${'p'.repeat(50_000)}`)
    expect(result.status).toBe(404)
    expect(result.body.code).toBe('not_found')
    expect(result.text.length).toBeLessThan(1024)
  }
})
