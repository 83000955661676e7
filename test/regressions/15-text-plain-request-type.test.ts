import { expect, it } from 'vitest'
import { LEDGER } from '../../src/assumptions.ts'
import { inProcess, send } from '../_targets.ts'

it('declares only application/json as the request type of POST /v2/tokens, so generated clients do not take a string body', async () => {
  const client = await inProcess.start()
  const document = (await send(client, 'GET', '/openapi.json')).body
  for (const path of ['/v1/customers', '/v2/tokens']) {
    expect(Object.keys(document.paths[path].post.requestBody.content)).toEqual([
      'application/json',
    ])
  }
})

it('still reads a text/plain JSON body on POST /v2/tokens, a server leniency the ledger documents', async () => {
  const client = await inProcess.start()
  const { status } = await send(client, 'POST', '/v2/tokens', {
    body: JSON.stringify({ scopes: ['customers:read'] }),
    headers: { 'content-type': 'text/plain;charset=UTF-8' },
  })
  expect(status).toBe(201)
  const row = LEDGER.find((item) => item.id === 'token.content-type')
  expect(row?.default).toContain('text/plain')
  expect(row?.default).toContain('declares only `application/json`')
})
