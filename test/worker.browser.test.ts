import type { Page } from 'playwright-core'
import type { ViteDevServer } from 'vite'
import { afterAll, beforeAll, expect, it } from 'vitest'
import {
  DEMO_KEY_ONE,
  PERSONA_READ_ONLY_KEY,
  REVOKED_KEY,
} from '../fixtures/demo-keys.ts'
import { fetchIn, postIn, startTestPage, useBrowser } from './_browser.ts'

// A page served by Vite's dev server, the worker script by our plugin: the
// page starts the sandbox itself (test/browser-page/main.ts).
let server: ViteDevServer
let url: string
beforeAll(async () => {
  ;({ server, url } = await startTestPage())
})
afterAll(() => server?.close())

const browser = useBrowser()
const ada = { name: 'Ada Lovelace', email: 'ada@example.com' }

async function open(query = ''): Promise<Page> {
  const page = await browser.page()
  await page.goto(`${url}${query}`)
  await page.locator('#status', { hasText: /ready|restored/ }).waitFor()
  return page
}

it('answers POST /v1/customers from the page through the service worker', async () => {
  const page = await open()
  const { status, headers, body } = await postIn(
    page,
    '/v1/customers',
    ada,
    DEMO_KEY_ONE,
  )
  expect(status).toBe(201)
  expect(body).toEqual({ id: expect.stringMatching(/^cus_/), ...ada })
  expect(headers['x-request-id']).toMatch(/^req_/)
  // The page is controlled by MSW's worker, not a patched fetch alone.
  const controller = await page.evaluate(
    () => navigator.serviceWorker.controller?.scriptURL,
  )
  expect(controller).toBe(`${url}mockServiceWorker.js`)
  const journal = await fetchIn(page, '/__sandbox/requests')
  expect(journal.body.requests[0]).toMatchObject({
    method: 'POST',
    path: '/v1/customers',
    status: 201,
  })
})

it('serves /openapi.json from the page, its generator loaded on the first ask', async () => {
  const page = await open()
  const { status, body } = await fetchIn(page, '/openapi.json')
  expect(status).toBe(200)
  expect(body.openapi).toMatch(/^3\.1\./)
  expect(Object.keys(body.paths)).toEqual(
    expect.arrayContaining(['/v1/customers', '/v2/tokens']),
  )
})

it('mints a token with POST /v2/tokens that then creates a customer', async () => {
  const page = await open()
  const minted = await postIn(
    page,
    '/v2/tokens',
    { scopes: ['customers:write'], expires_in: 600 },
    DEMO_KEY_ONE,
  )
  expect(minted.status).toBe(201)
  expect(minted.body).toMatchObject({
    id: expect.stringMatching(/^tkn_/),
    token_type: 'Bearer',
    scopes: ['customers:write'],
    expires_in: 600,
  })
  const created = await postIn(page, '/v1/customers', ada, minted.body.token)
  expect(created.status).toBe(201)
})

it('answers 401 without credentials and for a revoked key', async () => {
  const page = await open()
  const missing = await postIn(page, '/v1/customers', ada, null)
  expect(missing.status).toBe(401)
  expect(missing.body.code).toBe('missing_credentials')
  expect(missing.headers['www-authenticate']).toBe('Bearer realm="sandbox"')
  expect(missing.headers['content-type']).toContain('application/problem+json')
  const revoked = await postIn(page, '/v1/customers', ada, REVOKED_KEY)
  expect(revoked.status).toBe(401)
  expect(revoked.body.code).toBe('invalid_credentials')
})

it('answers 403 to a read-only key and to a token minted for customers:read', async () => {
  const page = await open()
  const persona = await postIn(
    page,
    '/v1/customers',
    ada,
    PERSONA_READ_ONLY_KEY,
  )
  expect(persona.status).toBe(403)
  expect(persona.body.code).toBe('insufficient_scope')
  expect(persona.headers['www-authenticate']).toContain(
    'error="insufficient_scope"',
  )
  const minted = await postIn(
    page,
    '/v2/tokens',
    { scopes: ['customers:read'] },
    DEMO_KEY_ONE,
  )
  const reader = await postIn(page, '/v1/customers', ada, minted.body.token)
  expect(reader.status).toBe(403)
  expect(reader.body.code).toBe('insufficient_scope')
})

it('expires a token once the clock moves past expires_at', async () => {
  const page = await open()
  const minted = await postIn(
    page,
    '/v2/tokens',
    { scopes: ['customers:write'], expires_in: 3600 },
    DEMO_KEY_ONE,
  )
  expect(
    (await postIn(page, '/v1/customers', ada, minted.body.token)).status,
  ).toBe(201)
  // Over HTTP, as any client of the sandbox's surface would…
  const moved = await postIn(
    page,
    '/__sandbox/clock',
    { advance_seconds: 3599 },
    null,
  )
  expect(moved.status).toBe(200)
  expect(
    (await postIn(page, '/v1/customers', ada, minted.body.token)).status,
  ).toBe(201)
  // …and through the JavaScript API the page holds.
  await page.evaluate(() => window.sandbox.clock.advance(1000))
  const expired = await postIn(page, '/v1/customers', ada, minted.body.token)
  expect(expired.status).toBe(401)
  expect(expired.body.code).toBe('token_expired')
  expect(expired.headers['www-authenticate']).toContain(
    'error_description="The access token expired"',
  )
})

it('lets requests it does not answer through to the network', async () => {
  const page = await open()
  const { status, headers, body } = await fetchIn(page, '/')
  expect(status).toBe(200)
  expect(headers['content-type']).toContain('text/html')
  expect(body).toContain('Worker test page')
})

it('keeps customers, tokens and the clock across a reload when persist is on', async () => {
  const page = await open('?persist')
  expect(await page.locator('#status').textContent()).toBe('ready')
  const customer = await postIn(page, '/v1/customers', ada, DEMO_KEY_ONE)
  const token = await postIn(
    page,
    '/v2/tokens',
    { scopes: ['customers:write'], expires_in: 7200 },
    DEMO_KEY_ONE,
  )
  const clock = await postIn(
    page,
    '/__sandbox/clock',
    { advance_seconds: 3600 },
    null,
  )

  await page.reload()
  await page.locator('#status', { hasText: 'restored' }).waitFor()
  const state = await fetchIn(page, '/__sandbox/state')
  expect(state.body.customers).toContainEqual(
    expect.objectContaining({ id: customer.body.id, ...ada }),
  )
  expect(state.body.tokens).toContainEqual(
    expect.objectContaining({ id: token.body.id, expired: false }),
  )
  expect((await fetchIn(page, '/__sandbox/clock')).body.now).toBe(
    clock.body.now,
  )
  // The token still works, and expires on the restored clock.
  expect(
    (await postIn(page, '/v1/customers', ada, token.body.token)).status,
  ).toBe(201)
  await postIn(page, '/__sandbox/clock', { advance_seconds: 3600 }, null)
  expect(
    (await postIn(page, '/v1/customers', ada, token.body.token)).body.code,
  ).toBe('token_expired')
})

it('replays an Idempotency-Key and keeps a queued fault across a reload when persist is on, as the data file does', async () => {
  const page = await open('?persist')
  const keyed = {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'idempotency-key': 'reload-1',
    },
    body: JSON.stringify(ada),
  }
  const first = await fetchIn(page, '/v1/customers', keyed)
  expect(first.status).toBe(201)
  const queued = await postIn(
    page,
    '/__sandbox/scenarios',
    { operation: 'createToken', status: 503 },
    null,
  )
  expect(queued.status).toBe(201)

  await page.reload()
  await page.locator('#status', { hasText: 'restored' }).waitFor()
  const again = await fetchIn(page, '/v1/customers', keyed)
  expect(again.status).toBe(201)
  expect(again.headers['idempotent-replayed']).toBe('true')
  expect(again.body).toEqual(first.body)
  const state = await fetchIn(page, '/__sandbox/state')
  expect(
    state.body.customers.filter((c: { id: string }) => c.id === first.body.id),
  ).toHaveLength(1)
  const token = await postIn(
    page,
    '/v2/tokens',
    { scopes: ['customers:read'] },
    DEMO_KEY_ONE,
  )
  expect(token.status).toBe(503)
})

it('saves changes made through the JavaScript API when the page is hidden', async () => {
  const page = await open('?persist')
  await page.evaluate(() => window.sandbox.clock.set('2030-01-01T00:00:00Z'))
  await page.reload()
  await page.locator('#status', { hasText: 'restored' }).waitFor()
  expect((await fetchIn(page, '/__sandbox/clock')).body.now).toBe(
    '2030-01-01T00:00:00.000Z',
  )
})

it('starts from the seed after a reload when persist is off', async () => {
  const page = await open()
  const customer = await postIn(page, '/v1/customers', ada, DEMO_KEY_ONE)
  await page.reload()
  await page.locator('#status', { hasText: 'ready' }).waitFor()
  const state = await fetchIn(page, '/__sandbox/state')
  expect(state.body.customers.map((c: { id: string }) => c.id)).not.toContain(
    customer.body.id,
  )
  expect(state.body.customers).toHaveLength(50)
})
