import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { expect, it } from 'vitest'
import { EMAIL_PATTERN } from '../../src/model/schemas.ts'
import { inProcess, send } from '../_targets.ts'

const ADDRESSES = [
  'ada@example.com',
  'a@example-.com',
  'a@-example.com',
  'a@ex-ample.com',
  'a.b@example.co',
  '.a@example.com',
  'a.@example.com',
  'a..b@example.com',
  "o'brien@example.com",
  "o'@example.com",
  'a+tag@sub.example.dev',
  'a@example.c',
  'a@example.c0m',
  'a@example',
  'a!b@example.com',
  `a@${'a'.repeat(63)}.com`,
  `a@${'a'.repeat(64)}.com`,
  `a@example.${'a'.repeat(63)}`,
  `a@example.${'a'.repeat(64)}`,
  'a@[127.0.0.1]',
  'a@exa_mple.com',
  'A@EXAMPLE.ORG',
]

it('refuses an email whose domain label ends in "-", as the document does', async () => {
  const client = await inProcess.start()
  const { status, body } = await send(client, 'POST', '/v1/customers', {
    body: { name: 'Ada', email: 'a@example-.com' },
  })
  expect(status).toBe(422)
  expect(body.errors[0]).toMatchObject({ field: 'email' })
})

it('accepts exactly the emails the document accepts (pattern and format: email), in both directions', async () => {
  const client = await inProcess.start()
  const document = (await send(client, 'GET', '/openapi.json')).body
  const schema =
    document.components.schemas.CreateCustomerRequest.properties.email
  expect(schema.pattern).toBe(EMAIL_PATTERN.source)
  const ajv = new Ajv2020({ strict: false })
  addFormats.default(ajv)
  const validate = ajv.compile(schema)
  const verdicts = []
  for (const email of ADDRESSES) {
    const { status } = await send(client, 'POST', '/v1/customers', {
      body: { name: 'Ada', email },
    })
    verdicts.push({ email, document: validate(email), server: status === 201 })
  }
  expect(verdicts.filter((v) => v.document !== v.server)).toEqual([])
  expect(verdicts.filter((v) => v.server).length).toBeGreaterThan(5)
  expect(verdicts.filter((v) => !v.server).length).toBeGreaterThan(5)
})
