import { expect, it } from 'vitest'
import { send, targets, useClients } from '../_targets.ts'

// Names that are not visible text were stored: control characters, a
// combining mark with no base, the braille blank, an unpaired surrogate.

const CONTROL = [
  ['a NUL between letters', 'A\u0000B'],
  ['a vertical tab', 'Ada\u000BLovelace'],
  ['an escape', '\u001B[31mAda'],
  ['a C1 control', 'Ada\u0085'],
  ['an unpaired high surrogate', 'A\uD800'],
  ['an unpaired low surrogate', '\uDC00Ada'],
] as const
const INVISIBLE = [
  ['a NUL alone', '\u0000'],
  ['combining marks only', '\u0301\u0301'],
  ['the braille blank', '\u2800'],
  ['a zero-width joiner', '\u200D'],
] as const

const documentPattern = async (
  client: Awaited<ReturnType<ReturnType<typeof useClients>>>,
) => {
  const document = (await send(client, 'GET', '/openapi.json')).body
  const schema = document.components.schemas.CreateCustomerRequest
  return new RegExp(schema.properties.name.pattern, 'u')
}

for (const target of targets) {
  const start = useClients(target)

  it(`refuses a name holding a control character or an unpaired surrogate with 422, as the document's pattern does (${target.name})`, async () => {
    const client = await start()
    const pattern = await documentPattern(client)
    const before = client.sandbox.customers.count()
    for (const [label, name] of CONTROL) {
      expect(pattern.test(name), label).toBe(false)
      const { status, body } = await send(client, 'POST', '/v1/customers', {
        body: { name, email: 'ada@example.com' },
      })
      expect(status, label).toBe(422)
      expect(body.code, label).toBe('validation_failed')
      expect(body.errors[0], label).toMatchObject({
        field: 'name',
        code: 'invalid_format',
      })
      expect(body.errors[0].message, label).toContain('control characters')
    }
    expect(client.sandbox.customers.count()).toBe(before)
  })

  it(`refuses a name with no visible base character with 422 blank, as the document's pattern does (${target.name})`, async () => {
    const client = await start()
    const pattern = await documentPattern(client)
    for (const [label, name] of INVISIBLE) {
      expect(pattern.test(name), label).toBe(false)
      const { status, body } = await send(client, 'POST', '/v1/customers', {
        body: { name, email: 'ada@example.com' },
      })
      expect([status, body.errors?.[0]?.code], label).toEqual([422, 'blank'])
    }
  })

  it(`takes names whose marks have a base, and emoji (${target.name})`, async () => {
    const client = await start()
    const pattern = await documentPattern(client)
    for (const name of [
      'Zoe\u0301',
      '\u0915\u093F',
      '\uD83D\uDC4B Ada',
      '\u2800Ada',
    ]) {
      expect(pattern.test(name), name).toBe(true)
      const { status, body } = await send(client, 'POST', '/v1/customers', {
        body: { name, email: `${codeOf(name)}@example.com` },
      })
      expect(status, name).toBe(201)
      expect(body.name).toBe(name)
    }
  })
}

const codeOf = (name: string): string =>
  [...name].map((c) => c.codePointAt(0)!.toString(16)).join('-')

it('refuses an email holding a control character with 422', async () => {
  const client = await targets[0]!.start()
  const { status, body } = await send(client, 'POST', '/v1/customers', {
    body: { name: 'Ada', email: 'ada\u0000@example.com' },
  })
  expect([status, body.errors[0].field]).toEqual([422, 'email'])
  await client.close()
})
