import { expect, it } from 'vitest'
import { send, targets } from '../_targets.ts'

// `GET /__sandbox/requests?limit=99999999999999999999` said "must be a
// whole number of at least 0", for a number that is one: it did not say
// the upper bound.

it.each([
  ['99999999999999999999', 'out_of_range'],
  ['10000000', 'out_of_range'],
  ['-1', 'invalid_type'],
  ['ten', 'invalid_type'],
])('refuses ?limit=%s with 422 naming both bounds', async (limit, code) => {
  const client = await targets[0]!.start()
  const { status, body } = await send(
    client,
    'GET',
    `/__sandbox/requests?limit=${limit}`,
  )
  expect(status).toBe(422)
  expect(body.errors[0]).toMatchObject({ field: 'limit', code })
  expect(body.errors[0].message).toContain('from 0 to 9999999')
  await client.close()
})

it('takes ?limit=9999999 and states the bound in the OpenAPI document', async () => {
  const client = await targets[0]!.start()
  expect(
    (await send(client, 'GET', '/__sandbox/requests?limit=9999999')).status,
  ).toBe(200)
  const document = (await send(client, 'GET', '/openapi.json')).body
  const parameter = document.paths['/__sandbox/requests'].get.parameters.find(
    (p: { name: string }) => p.name === 'limit',
  )
  expect(parameter.schema).toMatchObject({ minimum: 0, maximum: 9_999_999 })
  await client.close()
})
