import { expect, it } from 'vitest'
import { createIdempotencyStore } from '../src/request/idempotency.ts'
import { createJournal } from '../src/request/journal.ts'
import { createRateLimiter } from '../src/request/rate-limit.ts'

const stored = { status: 201, headers: [], body: '{}' }

it('refuses a new idempotency key past maxEntries live keys, dropping none, and takes it once they expire', () => {
  const store = createIdempotencyStore({ ttlMs: 60_000, maxEntries: 3 })
  for (let i = 0; i < 3; i++) {
    expect(store.begin(`k${i}`, 'body', 0, `acct${i}`).kind).toBe('new')
    store.complete(`k${i}`, stored)
  }
  expect(store.begin('k3', 'body', 0, 'acct3')).toEqual({
    kind: 'full',
    option: 'idempotency.maxEntries',
    max: 3,
  })
  expect(store.size).toBe(3)
  expect(store.begin('k0', 'body', 0, 'acct0').kind).toBe('replay')
  expect(store.begin('k3', 'body', 60_000, 'acct3').kind).toBe('new')
})

it('drops idempotency keys whose window has passed on the sandbox clock', () => {
  const store = createIdempotencyStore({ ttlMs: 1000, maxEntries: 100 })
  for (let i = 0; i < 50; i++) store.begin(`k${i}`, 'body', 0)
  store.begin('late', 'body', 5000)
  expect(store.size).toBe(1)
})

it('keeps a rate-limit window only for credentials of the current window', () => {
  const limiter = createRateLimiter({ limit: 10, windowSeconds: 60 })
  for (let i = 0; i < 1000; i++) limiter.hit(`credential-${i}`, 0)
  expect(limiter.size).toBe(1000)
  limiter.hit('credential-0', 60_000)
  expect(limiter.size).toBe(1)
})

it('keeps the newest journal entries only', () => {
  const journal = createJournal(5)
  for (let i = 0; i < 1000; i++) {
    journal.record({
      request_id: `req_${i}`,
      operation: null,
      method: 'GET',
      path: '/v1/x',
      status: 404,
      code: 'not_found',
      account_id: null,
      credential: null,
      duration_ms: 0,
      at: '2030-01-01T00:00:00.000Z',
      scenario: null,
      replayed: false,
    })
  }
  expect(journal.size).toBe(5)
  expect(journal.list().map((e) => e.request_id)).toEqual([
    'req_999',
    'req_998',
    'req_997',
    'req_996',
    'req_995',
  ])
})
