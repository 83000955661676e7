// An operation defined in this file alone is routed, validated, journaled and documented: the route table needs nothing else.
import { expect, it } from 'vitest'
import { z } from 'zod'
import { OPERATIONS, SURFACE_ROUTES } from '../handlers/index.ts'
import { documentRouteTable } from '../handlers/openapi.ts'
import { DEMO_KEY_ONE } from '../src/fixtures.ts'
import { CustomerSchema } from '../src/model/schemas.ts'
import { resolveOptions } from '../src/options.ts'
import { defineOperation } from '../src/request/define-operation.ts'
import { SandboxError } from '../src/request/errors.ts'
import { createSandboxCore } from '../src/sandbox-core.ts'

// A throwaway operation of a shape the API has none of: GET, no body, a
// path parameter, and a code of its own.
const getCustomer = defineOperation({
  operation: 'getCustomer',
  method: 'GET',
  path: '/v1/customers/{id}',
  scope: 'customers:read',
  params: z.object({ id: z.string().regex(/^cus_[0-9A-Za-z]{14}$/) }),
  throws: ['not_found'],
  document: {
    tag: { name: 'Customers', description: 'Version 1: customer records.' },
    summary: 'Read a customer',
    description: () => 'Needs `customers:read`.',
    success: {
      status: 200,
      description: 'The customer.',
      name: 'Customer',
      schema: () => CustomerSchema,
      example: () => ({
        id: 'cus_AAAAAAAAAAAAAA',
        name: 'Ada',
        email: 'a@b.co',
      }),
    },
  },
  async execute(ctx, principal, _body, _now, { id }) {
    const customer = ctx.db.customerById(id)
    if (!customer || customer.account_id !== principal.accountId) {
      throw new SandboxError('not_found', `There is no customer ${id}.`)
    }
    const { name, email } = customer
    return { status: 200, body: { id, name, email } }
  },
})

const operations = [...OPERATIONS, getCustomer]

const start = () => {
  const core = createSandboxCore({ seed: 1 }, { operations })
  const call = (path: string, init: RequestInit = {}) =>
    core.router.fetch(
      new Request(`http://localhost${path}`, {
        ...init,
        headers: { authorization: `Bearer ${DEMO_KEY_ONE}`, ...init.headers },
      }),
    )
  return { ...core, call }
}

it('routes GET /v1/customers/{id} to the operation with its path parameter, and journals it under its name', async () => {
  const { sandbox, call } = start()
  const created = await call('/v1/customers', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
  })
  const { id } = (await created.json()) as { id: string }

  const response = await call(`/v1/customers/${id}`)
  expect(response.status).toBe(200)
  expect(await response.json()).toEqual({
    id,
    name: 'Ada',
    email: 'ada@example.com',
  })
  expect(response.headers.get('idempotent-replayed')).toBeNull()
  expect(sandbox.journal.last()).toMatchObject({
    operation: 'getCustomer',
    method: 'GET',
    path: `/v1/customers/${id}`,
    status: 200,
  })
})

it('answers the operation’s own code, a refused path parameter and a missing credential as problems', async () => {
  const { call, router } = start()
  const unknown = await call('/v1/customers/cus_AAAAAAAAAAAAAA')
  expect(unknown.status).toBe(404)
  expect(await unknown.json()).toMatchObject({ code: 'not_found' })

  const malformed = await call('/v1/customers/nope')
  expect(malformed.status).toBe(422)
  expect(await malformed.json()).toMatchObject({
    code: 'validation_failed',
    errors: [
      { field: 'id', code: 'invalid_format', message: expect.any(String) },
    ],
  })

  const anonymous = await router.fetch(
    new Request('http://localhost/v1/customers/cus_AAAAAAAAAAAAAA'),
  )
  expect(anonymous.status).toBe(401)

  const wrongMethod = await call('/v1/customers/cus_AAAAAAAAAAAAAA', {
    method: 'DELETE',
  })
  expect(wrongMethod.status).toBe(405)
  expect(wrongMethod.headers.get('allow')).toBe('GET, HEAD, OPTIONS')
})

it('runs a scenario for the operation, as for the API’s own', async () => {
  const { call } = start()
  const response = await call('/v1/customers/cus_AAAAAAAAAAAAAA', {
    headers: { 'x-sandbox-scenario': 'status=503' },
  })
  expect(response.status).toBe(503)
  expect(await response.json()).toMatchObject({ code: 'simulated_failure' })
})

it('documents the operation from its definition: its path parameter, no body, and the errors its steps declare', () => {
  const document = documentRouteTable(resolveOptions(), '0.0.0', {
    operations,
    routes: SURFACE_ROUTES,
  })
  const entry = (document as any).paths['/v1/customers/{id}'].get
  expect(entry.operationId).toBe('getCustomer')
  expect(entry.tags).toEqual(['Customers'])
  expect(entry.requestBody).toBeUndefined()
  expect(entry.parameters.map((p: any) => `${p.in} ${p.name}`)).toEqual([
    'path id',
    'header X-Sandbox-Scenario',
  ])
  expect(entry.parameters[0]).toMatchObject({
    required: true,
    schema: { type: 'string', pattern: '^cus_[0-9A-Za-z]{14}$' },
  })
  const statuses = Object.keys(entry.responses)
  expect(statuses).toEqual(
    expect.arrayContaining(['200', '401', '403', '404', '422', 'default']),
  )
  const codes = (status: string) =>
    entry.responses[status].content['application/problem+json'].schema.allOf[1]
      .properties.code.enum
  // No body: nothing about media types, sizes, JSON or idempotency; what
  // remains under 400 and 415 is the standalone server's edge, which
  // answers any call (a repeated header, a bad Host, a transfer coding).
  expect(statuses).not.toContain('413')
  expect(codes('400')).toEqual([
    'simulated_failure',
    'invalid_request',
    'invalid_host',
  ])
  expect(entry.responses['415'].headers).not.toHaveProperty('Accept-Post')
  expect(codes('404')).toEqual(['not_found', 'simulated_failure'])
  expect(codes('409')).toEqual(['limit_reached', 'simulated_failure'])
  expect(Object.keys(entry.responses['200'].headers)).not.toContain(
    'Idempotent-Replayed',
  )
  // The API's own operations are documented as before, beside it.
  expect((document as any).paths['/v1/customers'].post.operationId).toBe(
    'createCustomer',
  )
})
