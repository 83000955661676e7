import fc from 'fast-check'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { isoTime } from '../src/model/clock.ts'
import { createSandbox } from '../src/index.ts'
import { send, targets, type Client } from './_targets.ts'

for (const target of targets) {
  describe(target.name, () => {
    let client: Client
    afterEach(() => client?.close())

    it('stamps created_at and expires_at from the sandbox clock', async () => {
      client = await target.start({ seed: 1 })
      client.sandbox.clock.set('2030-06-01T12:00:00Z')
      const token = await send(client, 'POST', '/v2/tokens', {
        body: { scopes: ['customers:read'], expires_in: 600 },
      })
      expect(token.body.created_at).toBe('2030-06-01T12:00:00.000Z')
      expect(token.body.expires_at).toBe('2030-06-01T12:10:00.000Z')
      expect(
        client.sandbox.customers
          .list()
          .every((c) => typeof c.created_at === 'string'),
      ).toBe(true)
    })

    it('reads, sets and advances the clock over /__sandbox/clock, and it stays where it is put', async () => {
      client = await target.start({ seed: 1 })
      const set = await send(client, 'POST', '/__sandbox/clock', {
        body: { now: '2030-01-01T00:00:00Z' },
      })
      expect(set.body).toEqual({
        now: '2030-01-01T00:00:00.000Z',
        frozen: true,
      })
      const advanced = await send(client, 'POST', '/__sandbox/clock', {
        body: { advance_seconds: 90 },
      })
      expect(advanced.body.now).toBe('2030-01-01T00:01:30.000Z')
      expect((await send(client, 'GET', '/__sandbox/clock')).body.now).toBe(
        '2030-01-01T00:01:30.000Z',
      )
    })

    it('expires a token when the clock reaches expires_at, not a millisecond before', async () => {
      client = await target.start({ seed: 1 })
      client.sandbox.clock.set('2030-01-01T00:00:00Z')
      const { body } = await send(client, 'POST', '/v2/tokens', {
        body: { scopes: ['customers:write'], expires_in: 60 },
      })
      const create = () =>
        send(client, 'POST', '/v1/customers', {
          key: body.token,
          body: { name: 'A', email: 'a@example.com' },
        })
      client.sandbox.clock.advance(59_999)
      expect((await create()).status).toBe(201)
      client.sandbox.clock.advance(1)
      const expired = await create()
      expect(expired.status).toBe(401)
      expect(expired.body.code).toBe('token_expired')
    })

    it('refuses bad clock bodies with 422 or 400 and leaves the clock alone', async () => {
      client = await target.start({ seed: 1 })
      client.sandbox.clock.set('2030-01-01T00:00:00Z')
      for (const body of [
        { now: 'yesterday' },
        { advance_seconds: 1.5 },
        { advance_seconds: 1, now: '2030-01-01T00:00:00Z' },
        {},
      ]) {
        expect(
          (await send(client, 'POST', '/__sandbox/clock', { body })).status,
        ).toBe(422)
      }
      expect(
        (await send(client, 'POST', '/__sandbox/clock', { body: '{"now":' }))
          .status,
      ).toBe(400)
      expect(client.sandbox.clock.now().toISOString()).toBe(
        '2030-01-01T00:00:00.000Z',
      )
    })

    it('goes back to following the host time on reset', async () => {
      client = await target.start({ seed: 1 })
      client.sandbox.clock.set('2000-01-01T00:00:00Z')
      await send(client, 'POST', '/__sandbox/reset', { body: {} })
      expect(client.sandbox.clock.frozen).toBe(false)
      expect(client.sandbox.clock.now().getUTCFullYear()).toBeGreaterThan(2000)
    })
  })
}

it('keeps running from a set time with clockAfterSet: running', async () => {
  const sandbox = createSandbox({ clockAfterSet: 'running' })
  await sandbox.ready
  vi.useFakeTimers({ toFake: ['Date'] })
  try {
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'))
    sandbox.clock.set('2030-01-01T00:00:00Z')
    vi.advanceTimersByTime(5_000)
    expect(sandbox.clock.now().toISOString()).toBe('2030-01-01T00:00:05.000Z')
    expect(sandbox.clock.frozen).toBe(false)
  } finally {
    vi.useRealTimers()
  }
})

it('follows Vitest fake timers until it is set', async () => {
  const sandbox = createSandbox()
  await sandbox.ready
  vi.useFakeTimers({ toFake: ['Date'] })
  try {
    vi.setSystemTime(new Date('2031-03-03T03:03:03Z'))
    expect(sandbox.clock.now().toISOString()).toBe('2031-03-03T03:03:03.000Z')
    vi.advanceTimersByTime(1000)
    expect(sandbox.clock.now().toISOString()).toBe('2031-03-03T03:03:04.000Z')
  } finally {
    vi.useRealTimers()
  }
})

it('throws a RangeError that says what to pass for an invalid date', () => {
  const sandbox = createSandbox()
  expect(() => sandbox.clock.set('not a date')).toThrow(
    /not a valid date.*ISO-8601/,
  )
  expect(() => sandbox.clock.advance(Number.NaN)).toThrow(RangeError)
  expect(() => sandbox.clock.set(9e15)).toThrow(RangeError)
})

it('writes timestamps as Date#toISOString, never a stale kept answer', () => {
  const MAX = 8.64e15
  // Runs of repeats and switches back and forth, as requests make them.
  const times = fc.array(
    fc.oneof(
      fc.integer({ min: -MAX, max: MAX }),
      fc.constantFrom(0, 1, -1, 951_782_400_000),
    ),
    { maxLength: 20 },
  )
  fc.assert(
    fc.property(times, (list) => {
      for (const ms of list) {
        expect(isoTime(ms), String(ms)).toBe(new Date(ms).toISOString())
      }
    }),
  )
})
