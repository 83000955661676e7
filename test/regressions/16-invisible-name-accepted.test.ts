import { expect, it } from 'vitest'
import { send, targets, useClients } from '../_targets.ts'

// A name must hold a visible character; "whitespace and zero-width
// characters do not count". A name of only a left-to-right mark (a
// zero-width character), a right-to-left override, a soft hyphen or a
// Hangul filler was still stored: it shows as nothing in any list.

const INVISIBLE = [
  ['a left-to-right mark', '\u200E'],
  ['a right-to-left mark and an Arabic letter mark', '\u200F\u061C'],
  ['bidirectional embeddings and overrides', '\u202A\u202B\u202C\u202D\u202E'],
  ['bidirectional isolates', '\u2066\u2067\u2068\u2069'],
  ['a soft hyphen', '\u00AD'],
  ['a combining grapheme joiner', '\u034F'],
  ['a Mongolian vowel separator', '\u180E'],
  ['invisible operators', '\u2061\u2062\u2063\u2064'],
  ['Hangul fillers', '\u3164\uFFA0\u115F\u1160'],
  ['variation selectors', '\uFE0F\uFE00'],
] as const

for (const target of targets) {
  const start = useClients(target)

  it(`refuses names with no visible character, as the document's pattern does (${target.name})`, async () => {
    const client = await start()
    const document = (await send(client, 'GET', '/openapi.json')).body
    // The request body is the named component CreateCustomerRequest.
    const { $ref } =
      document.paths['/v1/customers'].post.requestBody.content[
        'application/json'
      ].schema
    const schema = document.components.schemas[$ref.split('/').at(-1)]
    const visible = new RegExp(schema.properties.name.pattern, 'u')
    const before = client.sandbox.customers.count()
    for (const [label, name] of INVISIBLE) {
      expect(visible.test(name), label).toBe(false)
      const { status, body } = await send(client, 'POST', '/v1/customers', {
        body: { name, email: 'ada@example.com' },
      })
      expect([status, body.errors?.[0]?.code], label).toEqual([422, 'blank'])
    }
    expect(client.sandbox.customers.count()).toBe(before)
  })

  it(`accepts and echoes a visible name wrapped in bidirectional marks (${target.name})`, async () => {
    const client = await start()
    const name = '\u2067\u0639\u0644\u064A\u2069 \u200EAda'
    const { status, body } = await send(client, 'POST', '/v1/customers', {
      body: { name, email: 'ada@example.com' },
    })
    expect(status).toBe(201)
    expect(body.name).toBe(name)
  })
}

it('refuses an account name with no visible character', async () => {
  const client = await targets[0]!.start()
  const { status, body } = await send(client, 'POST', '/__sandbox/api-keys', {
    body: { account_name: '\u200E\u202E' },
  })
  expect([status, body.errors[0].code]).toEqual([422, 'blank'])
  await client.close()
})
