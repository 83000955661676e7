import { readFile } from 'node:fs/promises'
import { afterEach, expect, it } from 'vitest'
import { renderErrorCatalogue, renderOpenApi } from '../scripts/openapi.ts'
import { createSandbox } from '../src/index.ts'
import { ERROR_REGISTRY } from '../src/contract.ts'
import { checkResponse } from './_openapi.ts'
import { send, targets, type Client } from './_targets.ts'

const clients: Client[] = []
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close()
})

it('has a committed openapi.json that matches the schemas (run npm run openapi when this fails)', async () => {
  expect(
    await readFile(new URL('../openapi.json', import.meta.url), 'utf8'),
  ).toBe(renderOpenApi())
})

it('has a committed docs/reference/errors.md that matches the error registry (run npm run openapi when this fails)', async () => {
  const catalogue = await readFile(
    new URL('../docs/reference/errors.md', import.meta.url),
    'utf8',
  )
  expect(catalogue).toBe(renderErrorCatalogue())
  for (const code of Object.keys(ERROR_REGISTRY))
    expect(catalogue).toContain(`\`${code}\``)
})

// Every component name some release of openapi.json carried: generated
// clients import them by name, so a name stays once it ships (issue 28).
const SHIPPED_SCHEMA_NAMES = [
  'CreateCustomerRequest',
  'CreateTokenRequest',
  'Customer',
  'FieldError',
  'Problem',
  'SandboxAccountClock',
  'SandboxAssumption',
  'SandboxClock',
  'SandboxCreatedApiKey',
  'SandboxHealth',
  'SandboxHealthDegraded',
  'SandboxJournalEntry',
  'SandboxLatency',
  'SandboxReset',
  'SandboxRestored',
  'SandboxScenario',
  'SandboxSession',
  'SandboxSnapshot',
  'SandboxState',
  'Token',
]

it('keeps every component schema name that ever shipped', () => {
  const document = JSON.parse(renderOpenApi())
  expect(Object.keys(document.components.schemas)).toEqual(
    expect.arrayContaining(SHIPPED_SCHEMA_NAMES),
  )
})

it('documents every error code of the registry', () => {
  const document = renderOpenApi()
  for (const code of Object.keys(ERROR_REGISTRY))
    expect(document).toContain(`"${code}"`)
})

it('keeps full secrets out of the document', () => {
  expect(renderOpenApi()).not.toMatch(
    /sk_test_[0-9A-Za-z]{24}|tok_test_[0-9A-Za-z]{32}/,
  )
})

it('fails a response that strays from the document', async () => {
  const sandbox = createSandbox()
  await sandbox.ready
  const url = new URL('http://sandbox.test/v1/customers')
  const extraField = new Response(
    JSON.stringify({
      id: 'cus_AAAAAAAAAAAAAA',
      name: 'A',
      email: 'a@b.co',
      extra: 1,
    }),
    {
      status: 201,
      headers: { 'content-type': 'application/json', 'x-request-id': 'req_1' },
    },
  )
  await expect(checkResponse(sandbox, 'POST', url, extraField)).rejects.toThrow(
    /strays from the document/,
  )
  const undocumented = new Response('{}', {
    status: 202,
    headers: { 'content-type': 'application/json', 'x-request-id': 'req_1' },
  })
  await expect(
    checkResponse(sandbox, 'POST', url, undocumented),
  ).rejects.toThrow(/not documented/)
})

for (const target of targets) {
  it(`serves the document at /openapi.json, following the options (${target.name})`, async () => {
    const client = await target.start({
      scopes: [
        'customers:read',
        'customers:write',
        'tokens:write',
        'invoices:read',
      ],
      expiresIn: { max: 600 },
    })
    clients.push(client)
    const { status, body } = await send(client, 'GET', '/openapi.json', {
      key: null,
    })
    expect(status).toBe(200)
    expect(body.openapi).toBe('3.1.0')
    const tokenRequest = body.components.schemas.CreateTokenRequest
    expect(tokenRequest.properties.scopes.items.enum).toContain('invoices:read')
    expect(tokenRequest.properties.expires_in.maximum).toBe(600)
    expect(Object.keys(body.paths)).toEqual(
      expect.arrayContaining([
        '/v1/customers',
        '/v2/tokens',
        '/__sandbox/state',
      ]),
    )
  })
}
