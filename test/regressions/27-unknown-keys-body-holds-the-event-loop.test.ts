import { expect, it, vi } from 'vitest'
import { createCustomerBodySchema } from '../../handlers/customers.ts'
import { resolveOptions } from '../../src/options.ts'
import { MAX_FIELD_ERRORS, validationError } from '../../src/request/errors.ts'
import { validateBody } from '../../src/request/validation.ts'
import { inProcess, send } from '../_targets.ts'

// A 1 MiB body of 88,000 unknown keys was answered in 170-500 ms, where
// another 1 MiB body took 8-116 ms, and the server's one event loop (its
// health check too) waited as long: zod's strict check named every key,
// and an error was made for each before all but 20 were dropped. The
// body's keys are checked against the schema's before zod runs now, and
// unknown ones past the first MAX_FIELD_ERRORS only counted. No timing is
// asserted: the work is.

vi.mock('../../src/request/errors.ts', async (original) => {
  const actual = await original<typeof import('../../src/request/errors.ts')>()
  return { ...actual, validationError: vi.fn(actual.validationError) }
})

const UNKNOWN = 88_000

const withUnknownKeys = (known: Record<string, unknown>) => {
  const body: Record<string, unknown> = { ...known }
  for (let i = 0; i < UNKNOWN; i++) body[`k${i}`] = 1
  return body
}

it('answers a body of 88,000 unknown keys with the first 20 and a count of the rest, on both creates', async () => {
  const client = await inProcess.start()
  const before = client.sandbox.customers.count()
  for (const [path, known] of [
    ['/v1/customers', { name: 'Ada', email: 'ada@example.com' }],
    ['/v2/tokens', { scopes: ['customers:read'] }],
  ] as const) {
    const sent = JSON.stringify(withUnknownKeys(known))
    expect(sent.length).toBeGreaterThan(900_000)
    const { status, body } = await send(client, 'POST', path, { body: sent })
    expect(status, path).toBe(422)
    expect(body.code, path).toBe('validation_failed')
    expect(body.errors, path).toHaveLength(MAX_FIELD_ERRORS)
    expect(body.errors[0], path).toEqual({
      field: 'k0',
      pointer: '/k0',
      code: 'unknown_field',
      message: 'k0 is not a field of this request',
    })
    expect(body.errors.at(-1).field, path).toBe(`k${MAX_FIELD_ERRORS - 1}`)
    expect(body.errors_omitted, path).toBe(UNKNOWN - MAX_FIELD_ERRORS)
    expect(body.detail, path).toMatch(
      /^88000 problems: k0 is not a field of this request; /,
    )
  }
  expect(client.sandbox.customers.count()).toBe(before)
})

it('makes field errors for no more of the 88,000 unknown keys than an answer lists', async () => {
  const client = await inProcess.start()
  vi.mocked(validationError).mockClear()
  const { status } = await send(client, 'POST', '/v1/customers', {
    body: withUnknownKeys({ name: 'Ada', email: 'not an email' }),
  })
  expect(status).toBe(422)
  expect(validationError).toHaveBeenCalledTimes(1)
  const [made] = vi.mocked(validationError).mock.calls[0]!
  expect(made.length).toBeLessThanOrEqual(MAX_FIELD_ERRORS + 1)
  // The field's own problem comes first, as before.
  expect(made[0]).toMatchObject({ field: 'email', code: 'invalid_format' })
})

it('has zod name no more of the 88,000 unknown keys than an answer lists', () => {
  const schema = createCustomerBodySchema(resolveOptions())
  const safeParse = vi.spyOn(schema, 'safeParse')
  expect(() =>
    validateBody(
      schema,
      withUnknownKeys({ name: '', email: 'ada@example.com' }),
    ),
  ).toThrow(
    /^88001 problems: name must be 1 to 200 characters long as sent \(got 0\); k0 /,
  )
  const named = safeParse.mock.results
    .flatMap((r) => (r.value.success ? [] : r.value.error.issues))
    .reduce((n, issue) => n + ('keys' in issue ? issue.keys.length : 1), 0)
  // The name's own issue, and at most the unknown keys listed.
  expect(named).toBeLessThanOrEqual(1 + MAX_FIELD_ERRORS)
})

it('still names a sent __proto__ as an unknown field, beside the fields it would have set', async () => {
  const client = await inProcess.start()
  const { status, body } = await send(client, 'POST', '/v1/customers', {
    body: '{"__proto__":{"name":"Ada","email":"ada@example.com"}}',
  })
  expect(status).toBe(422)
  expect(body.errors).toEqual([
    expect.objectContaining({ field: 'name', code: 'required' }),
    expect.objectContaining({ field: 'email', code: 'required' }),
    expect.objectContaining({ field: '__proto__', code: 'unknown_field' }),
  ])
})
