import { expect, it } from 'vitest'
import { inProcess, send } from '../_targets.ts'

const email = 'ada@example.com'

it('returns 422 for a 1 MB name of spaces and one letter, and stores nothing', async () => {
  const client = await inProcess.start()
  const before = client.sandbox.customers.count()
  const name = `${' '.repeat(1_040_000)}a`
  const { status, body, text } = await send(client, 'POST', '/v1/customers', {
    body: { name, email },
  })
  expect(status).toBe(422)
  expect(body.errors).toEqual([
    expect.objectContaining({ field: 'name', code: 'too_long' }),
  ])
  expect(body.errors[0].message).toContain('1 to 200 characters long as sent')
  expect(text.length).toBeLessThan(4096)
  expect(client.sandbox.customers.count()).toBe(before)
})

it('returns 422 for a name of 201 characters that trims to one', async () => {
  const client = await inProcess.start()
  const { status, body } = await send(client, 'POST', '/v1/customers', {
    body: { name: `a${' '.repeat(200)}`, email },
  })
  expect(status).toBe(422)
  expect(body.errors[0]).toMatchObject({ field: 'name', code: 'too_long' })
})

for (const [label, name] of [
  ['zero-width spaces', '\u200B\u200B\u200B'],
  ['a zero-width joiner and a word joiner', '\u200D\u2060'],
  ['byte order marks and spaces', '\uFEFF \uFEFF'],
  ['a no-break space and a tab', '\u00A0\t'],
] as const) {
  it(`returns 422 naming name when it holds only ${label}`, async () => {
    const client = await inProcess.start()
    const { status, body } = await send(client, 'POST', '/v1/customers', {
      body: { name, email },
    })
    expect(status).toBe(422)
    expect(body.errors).toEqual([
      expect.objectContaining({ field: 'name', code: 'blank' }),
    ])
    expect(body.errors[0].message).toMatch(/visible character/)
  })
}

it('accepts and echoes a visible character between zero-width ones', async () => {
  const client = await inProcess.start()
  const name = '\u200Ba\u200B'
  const { status, body } = await send(client, 'POST', '/v1/customers', {
    body: { name, email },
  })
  expect(status).toBe(201)
  expect(body.name).toBe(name)
})

it('states the name rule in the OpenAPI document as minLength, maxLength and pattern', async () => {
  const client = await inProcess.start()
  const { body } = await send(client, 'GET', '/openapi.json')
  const name = body.components.schemas.CreateCustomerRequest.properties.name
  expect(name).toMatchObject({ type: 'string', minLength: 1, maxLength: 200 })
  const visible = new RegExp(name.pattern, 'u')
  expect(visible.test('\u200B \uFEFF\u2060\u200C')).toBe(false)
  expect(visible.test('\u200Ba')).toBe(true)
})

it('returns 422 naming account_name and its bounds when it is empty', async () => {
  const client = await inProcess.start()
  const { status, body } = await send(client, 'POST', '/__sandbox/api-keys', {
    body: { account_name: '' },
  })
  expect(status).toBe(422)
  expect(body.errors).toEqual([
    expect.objectContaining({ field: 'account_name', code: 'too_short' }),
  ])
  expect(body.detail).not.toContain('undefined')
  expect(body.detail).toMatch(/account_name must be 1 to 200 characters/)
})

it('returns 422 when account_name is only zero-width spaces or longer than 200 characters', async () => {
  const client = await inProcess.start()
  for (const account_name of ['\u200B\u200B', 'x'.repeat(201)]) {
    const { status, body } = await send(client, 'POST', '/__sandbox/api-keys', {
      body: { account_name },
    })
    expect(status).toBe(422)
    expect(body.errors[0].field).toBe('account_name')
  }
  expect(client.sandbox.accounts.list()).toHaveLength(3)
})
