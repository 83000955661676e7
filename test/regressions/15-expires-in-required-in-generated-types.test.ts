import openapiTS, { astToString } from 'openapi-typescript'
import { expect, it } from 'vitest'
import { createOpenApiDocument } from '../../src/openapi.ts'
import { resolveOptions } from '../../src/options.ts'

// openapi-typescript types a property with a `default` in a $ref'd schema as
// required (its issues #1741 and #1903): the request bodies stay inline.
it('keeps expires_in optional in the types openapi-typescript generates for POST /v2/tokens', async () => {
  const document = createOpenApiDocument(resolveOptions())
  const ast = await openapiTS(JSON.stringify(document))
  const types = astToString(ast)
  const operation = types.slice(types.indexOf('createToken: {'))
  const requestBody = operation.slice(
    operation.indexOf('requestBody: {'),
    operation.indexOf('responses: {'),
  )
  expect(requestBody).toMatch(/scopes: \(/)
  expect(requestBody).toMatch(/expires_in\?: number;/)
})

it('states the request bodies inline, with the default of expires_in kept', () => {
  const document = createOpenApiDocument(resolveOptions()) as any
  for (const path of ['/v1/customers', '/v2/tokens']) {
    const schema =
      document.paths[path].post.requestBody.content['application/json'].schema
    expect(schema.$ref).toBeUndefined()
    expect(schema.type).toBe('object')
  }
  const token =
    document.paths['/v2/tokens'].post.requestBody.content['application/json']
      .schema
  expect(token.required).toEqual(['scopes'])
  expect(token.properties.expires_in.default).toBe(3600)
})
