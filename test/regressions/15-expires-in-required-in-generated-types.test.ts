import openapiTS, { astToString } from 'openapi-typescript'
import { expect, it } from 'vitest'
import { createOpenApiDocument } from '../../handlers/document.ts'
import { resolveOptions } from '../../src/options.ts'

// openapi-typescript types a property with a `default` in a $ref'd schema as
// required (its issues #1741 and #1903). The request bodies are named
// components again (issue 28: clients import CreateTokenRequest), so they
// state their defaults in words, not with the `default` keyword.
it('keeps expires_in optional in the types openapi-typescript generates for POST /v2/tokens', async () => {
  const document = createOpenApiDocument(resolveOptions())
  const ast = await openapiTS(JSON.stringify(document))
  const types = astToString(ast)
  const operation = types.slice(types.indexOf('createToken: {'))
  const requestBody = operation.slice(
    operation.indexOf('requestBody: {'),
    operation.indexOf('responses: {'),
  )
  expect(requestBody).toContain('components["schemas"]["CreateTokenRequest"]')
  const named = types.slice(types.indexOf('CreateTokenRequest: {'))
  const shape = named.slice(0, named.indexOf('\n        };'))
  expect(shape).toMatch(/scopes: \(/)
  expect(shape).toMatch(/expires_in\?: number;/)
})

it('names the request bodies as components in their input shape, with the default of expires_in in words', () => {
  const document = createOpenApiDocument(resolveOptions()) as any
  for (const [path, name] of [
    ['/v1/customers', 'CreateCustomerRequest'],
    ['/v2/tokens', 'CreateTokenRequest'],
  ] as const) {
    expect(
      document.paths[path].post.requestBody.content['application/json'].schema,
    ).toEqual({ $ref: `#/components/schemas/${name}` })
  }
  const token = document.components.schemas.CreateTokenRequest
  expect(token.required).toEqual(['scopes'])
  expect(token.properties.expires_in.default).toBeUndefined()
  expect(token.properties.expires_in.description).toContain('3600 when omitted')
})
