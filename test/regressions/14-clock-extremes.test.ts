import { expect, it } from 'vitest'
import { vi } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { inProcess, send } from '../_targets.ts'

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

it('returns 422 out_of_range naming the range when the clock would pass year 9999, and leaves it where it was', async () => {
  const client = await inProcess.start()
  client.sandbox.clock.set('9999-12-31T23:00:00Z')
  const { status, body } = await send(client, 'POST', '/__sandbox/clock', {
    body: { advance_seconds: 3600 },
  })
  expect(status).toBe(422)
  expect(body.code).toBe('out_of_range')
  expect(body.detail).toContain(
    '0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z',
  )
  expect(body.errors[0]).toMatchObject({
    field: 'advance_seconds',
    code: 'out_of_range',
  })
  expect(client.sandbox.clock.now().toISOString()).toBe(
    '9999-12-31T23:00:00.000Z',
  )
})

it('returns 422 out_of_range when the clock would go before year 0, by a set with an offset or an advance', async () => {
  const client = await inProcess.start()
  client.sandbox.clock.set('2030-01-01T00:00:00Z')
  for (const body of [
    { now: '0000-01-01T00:00:00+01:00' },
    { now: '9999-12-31T23:00:00-05:00' },
    { advance_seconds: -70_000_000_000 },
    { advance_seconds: 1e300 },
  ]) {
    const result = await send(client, 'POST', '/__sandbox/clock', { body })
    expect(result.status, JSON.stringify(body)).toBe(422)
    expect(result.body.code).toBe('out_of_range')
  }
  expect(client.sandbox.clock.now().toISOString()).toBe(
    '2030-01-01T00:00:00.000Z',
  )
})

it('accepts both ends of the range exactly', async () => {
  const client = await inProcess.start()
  for (const now of ['0000-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z']) {
    const { status, body } = await send(client, 'POST', '/__sandbox/clock', {
      body: { now },
    })
    expect(status).toBe(200)
    expect(body.now).toBe(now)
  }
})

it('throws a RangeError from clock.set and clock.advance past the range', () => {
  const sandbox = createSandbox()
  sandbox.clock.set('9999-12-31T23:59:59.000Z')
  expect(() => sandbox.clock.advance(1000)).toThrow(RangeError)
  expect(() => sandbox.clock.advance(1000)).toThrow(/9999-12-31T23:59:59.999Z/)
  expect(() => sandbox.clock.set(Date.UTC(10_000, 0, 1))).toThrow(RangeError)
  expect(() =>
    sandbox.clock.set(Date.parse('0000-01-01T00:00:00Z') - 1),
  ).toThrow(RangeError)
  expect(sandbox.clock.now().toISOString()).toBe('9999-12-31T23:59:59.000Z')
})

it('returns 422 naming expires_in when a token would end after year 9999, and stores no token', async () => {
  const client = await inProcess.start()
  client.sandbox.clock.set('9999-12-31T23:00:00Z')
  const before = client.sandbox.tokens.list().length
  const { status, body } = await send(client, 'POST', '/v2/tokens', {
    body: { scopes: ['customers:read'], expires_in: 3601 },
  })
  expect(status).toBe(422)
  expect(body.code).toBe('validation_failed')
  expect(body.errors).toEqual([
    expect.objectContaining({ field: 'expires_in', code: 'out_of_range' }),
  ])
  expect(body.errors[0].message).toContain('at most 3599 s')
  expect(client.sandbox.tokens.list()).toHaveLength(before)
  const fits = await send(client, 'POST', '/v2/tokens', {
    body: { scopes: ['customers:read'], expires_in: 3599 },
  })
  expect(fits.status).toBe(201)
  expect(fits.body.expires_at).toBe('9999-12-31T23:59:59.000Z')
})

it('mints API keys with date-time timestamps at both ends of the range, with no 500', async () => {
  const client = await inProcess.start()
  for (const now of ['0000-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z']) {
    client.sandbox.clock.set(now)
    const { status } = await send(client, 'POST', '/__sandbox/api-keys', {
      body: {},
    })
    expect(status).toBe(201)
  }
  const state = await send(client, 'GET', '/__sandbox/state')
  for (const account of state.body.accounts)
    expect(account.created_at).toMatch(DATE_TIME)
})

it('holds the clock at 9999-12-31T23:59:59.999Z when the host time passes it', async () => {
  const sandbox = createSandbox()
  await sandbox.ready
  vi.useFakeTimers({ toFake: ['Date'] })
  try {
    vi.setSystemTime(new Date('+012000-01-01T00:00:00Z'))
    expect(sandbox.clock.now().toISOString()).toBe('9999-12-31T23:59:59.999Z')
  } finally {
    vi.useRealTimers()
  }
})

it('names the field and both accepted shapes when the clock body is {"advance":60}', async () => {
  const client = await inProcess.start()
  const { status, body } = await send(client, 'POST', '/__sandbox/clock', {
    body: { advance: 60 },
  })
  expect(status).toBe(422)
  expect(body.errors).toEqual([
    expect.objectContaining({ field: 'advance', code: 'unknown_field' }),
  ])
  expect(body.detail).toContain('advance_seconds')
  expect(body.detail).toContain('"now"')
  expect(body.detail).not.toMatch(/^ is invalid/)
})

it('names the field when advance_seconds is not a whole number or now is not a date-time', async () => {
  const client = await inProcess.start()
  const fraction = await send(client, 'POST', '/__sandbox/clock', {
    body: { advance_seconds: 1.5 },
  })
  expect(fraction.status).toBe(422)
  expect(fraction.body.errors[0]).toMatchObject({
    field: 'advance_seconds',
    code: 'not_integer',
  })
  const text = await send(client, 'POST', '/__sandbox/clock', {
    body: { now: 'yesterday' },
  })
  expect(text.status).toBe(422)
  expect(text.body.errors[0]).toMatchObject({
    field: 'now',
    code: 'invalid_format',
  })
  expect(text.body.detail).toContain('2026-01-01T00:00:00Z')
})

it('loads again what it saved with the clock at the end of year 9999', async () => {
  const client = await inProcess.start()
  client.sandbox.clock.set('9999-12-31T23:58:00Z')
  const token = await send(client, 'POST', '/v2/tokens', {
    body: { scopes: ['customers:read'], expires_in: 60 },
  })
  expect(token.status).toBe(201)
  await send(client, 'POST', '/__sandbox/api-keys', { body: {} })
  const copy = createSandbox({ from: client.sandbox.export() })
  await copy.ready
  expect(copy.clock.now().toISOString()).toBe('9999-12-31T23:58:00.000Z')
  expect(copy.tokens.get(token.body.id)?.expires_at).toBe(
    '9999-12-31T23:59:00.000Z',
  )
})
