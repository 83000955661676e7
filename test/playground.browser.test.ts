import type { Page } from 'playwright-core'
import { afterEach, beforeEach, expect, it } from 'vitest'
import {
  DEMO_KEY_ONE,
  PERSONA_EXPIRED_TOKENS_KEY,
  PERSONA_RATE_LIMITED_KEY,
  PERSONA_READ_ONLY_KEY,
  PERSONA_SLOW_KEY,
  PERSONA_UNAVAILABLE_KEY,
  REVOKED_KEY,
} from '../fixtures/demo-keys.ts'
import { createSandboxServer, type SandboxServer } from '../src/node.ts'
import { screenshot, startDevServer, useBrowser } from './_browser.ts'

// The built playground (dist/playground), served by the standalone server as
// `npm start` serves it: by default it shows and drives that server.
let server: SandboxServer
beforeEach(async () => {
  server = await createSandboxServer({ port: 0 })
})
afterEach(() => server?.close())

const browser = useBrowser()

async function open(query = '', before?: (page: Page) => Promise<unknown>) {
  const page = await browser.page()
  await before?.(page)
  await page.goto(`${server.playgroundUrl!}${query}`)
  await page.locator('body[data-ready="true"]').waitFor()
  return page
}

/** `expect.poll` with room for a busy machine: it waits, it never times the page. */
const eventually = <T>(read: () => T) => expect.poll(read, { timeout: 10_000 })

/** Clicks a send button and waits until the response panel shows `status`. */
const sendAndSee = async (page: Page, button: string, status: string) => {
  await page.getByRole('button', { name: button }).click()
  await eventually(() => page.locator('#response-status').textContent()).toBe(
    status,
  )
}

/** What the server itself says, over HTTP, as curl would ask. */
async function serverSays<T>(path: string): Promise<T> {
  const response = await fetch(`${server.url}/__sandbox/${path}`)
  expect(response.status).toBe(200)
  return (await response.json()) as T
}

/** `POST /v1/customers` from Node, as curl would send it. */
function curlCustomer(name: string, key = DEMO_KEY_ONE): Promise<Response> {
  return fetch(`${server.url}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name, email: 'someone@example.com' }),
  })
}

const customerRows = (page: Page) => page.locator('#customers tbody tr')
const journalRows = (page: Page) => page.locator('#journal tbody tr')

it('served at /, shows a customer created with curl within a second of page time', async () => {
  const page = await open('', (p) => p.clock.install())
  expect(await page.locator('#status').textContent()).toBe(
    `Showing the sandbox server at ${server.url}: what curl, tests and this page send to it appears here.`,
  )
  expect(await page.getByLabel(`The server at ${server.url}`).isChecked()).toBe(
    true,
  )
  // The page's timers stand still: only the second run below lets it look.
  await page.clock.pauseAt(Date.now() + 60_000)
  expect((await curlCustomer('Curl Created')).status).toBe(201)
  await page.clock.runFor(1000)
  await eventually(() => customerRows(page).first().textContent()).toContain(
    'Curl Created',
  )
  expect(await journalRows(page).first().textContent()).toContain(
    'POST /v1/customers201 Created',
  )
  expect(
    await page
      .locator('#accounts tbody tr', { hasText: 'Demo Account One' })
      .locator('td')
      .nth(2)
      .textContent(),
  ).toBe('26')
})

it('moves the server clock and queues faults on the server, and resets it', async () => {
  const page = await open()
  type Clock = { now: string; frozen: boolean }
  const before = await serverSays<Clock>('clock')
  await page.getByRole('button', { name: '+1 hour' }).click()
  await eventually(async () => (await serverSays<Clock>('clock')).frozen).toBe(
    true,
  )
  const after = await serverSays<Clock>('clock')
  expect(Date.parse(after.now) - Date.parse(before.now)).toBeGreaterThanOrEqual(
    3_600_000,
  )
  await eventually(() =>
    page.locator('#clock-now').getAttribute('datetime'),
  ).toBe(after.now)

  await page.locator('#scenario-operation').selectOption('createCustomer')
  await page.getByRole('button', { name: 'Fail with 503' }).click()
  await eventually(() =>
    serverSays<{ scenarios: unknown[] }>('scenarios'),
  ).toEqual({
    scenarios: [
      expect.objectContaining({
        operation: 'createCustomer',
        status: 503,
        remaining: 1,
      }),
    ],
  })
  await eventually(() => page.locator('#scenarios').textContent()).toBe(
    'Next call of POST /v1/customers: fail with 503',
  )
  // The server's next call, from anyone, fails; the page sees the queue empty.
  expect((await curlCustomer('Refused')).status).toBe(503)
  await eventually(() => page.locator('#scenarios').textContent()).toBe(
    'None queued: calls answer normally.',
  )
  await eventually(() => journalRows(page).first().textContent()).toContain(
    '503 Service Unavailable',
  )

  await page.getByRole('button', { name: 'Network error' }).click()
  await page.getByRole('button', { name: 'Clear scenarios' }).click()
  await eventually(() =>
    serverSays<{ scenarios: unknown[] }>('scenarios'),
  ).toEqual({ scenarios: [] })

  expect((await curlCustomer('Kept until reset')).status).toBe(201)
  await page.getByRole('button', { name: 'Reset to the seed' }).click()
  await eventually(
    async () =>
      (await serverSays<{ customers: unknown[] }>('state')).customers.length,
  ).toBe(50)
  await eventually(() =>
    page.locator('#customers-count').textContent(),
  ).toContain('50 customers in all')
})

it('clicks through both operations against the server, with the assumptions', async () => {
  const page = await open()
  await sendAndSee(page, 'Send POST /v1/customers', '201 Created')
  const response = await page.locator('#response').textContent()
  expect(response).toContain('HTTP 201 Created')
  expect(response).toMatch(/x-request-id: req_/)
  expect(response).toContain('"name": "Ada Lovelace"')
  expect(await page.locator('#request').textContent()).toContain(
    `POST ${server.url}/v1/customers\ncontent-type: application/json\nauthorization: Bearer ${DEMO_KEY_ONE}`,
  )
  const state = await serverSays<{ customers: { name: string }[] }>('state')
  expect(state.customers.at(-1)?.name).toBe('Ada Lovelace')
  expect(await customerRows(page).first().textContent()).toContain(
    'Ada Lovelace',
  )

  // A writing token, then an hour on the server's clock: expired.
  await sendAndSee(page, 'Send POST /v2/tokens', '201 Created')
  const newest = page.locator('#tokens tbody tr').first()
  await eventually(() => newest.textContent()).toContain('valid')
  await page
    .getByRole('button', { name: 'Use it in "Create a customer"' })
    .click()
  await sendAndSee(page, 'Send POST /v1/customers', '201 Created')
  await page.getByRole('button', { name: '+1 hour' }).click()
  await eventually(() => newest.textContent()).toContain('expired')
  await sendAndSee(page, 'Send POST /v1/customers', '401 Unauthorized')
  expect(await page.locator('#response').textContent()).toContain(
    '"code": "token_expired"',
  )

  const statuses = await page
    .locator('#journal tbody tr td:nth-child(3)')
    .allTextContents()
  expect(statuses.slice(0, 4)).toEqual([
    '401 Unauthorized',
    '201 Created',
    '201 Created',
    '201 Created',
  ])
  expect(await page.locator('#assumptions tbody tr').count()).toBeGreaterThan(
    10,
  )
  expect(await page.locator('#assumptions').textContent()).toContain(
    'requiredFields',
  )
  await screenshot(page, 'playground')
})

it('tells the five persona keys apart in the accounts and the journal', async () => {
  const page = await open()
  const personas = page.locator('#accounts tbody tr', {
    hasText: 'Persona Account',
  })
  const keys = await personas.locator('li').allTextContents()
  expect(keys).toEqual([
    `${PERSONA_RATE_LIMITED_KEY} persona rate-limited`,
    `${PERSONA_SLOW_KEY} persona slow`,
    `${PERSONA_UNAVAILABLE_KEY} persona unavailable`,
    `${PERSONA_EXPIRED_TOKENS_KEY} persona expired-tokens`,
    `${PERSONA_READ_ONLY_KEY} persona read-only`,
  ])
  expect(
    await page
      .locator('#accounts tbody tr', { hasText: 'Demo Account One' })
      .locator('li')
      .allTextContents(),
  ).toEqual([DEMO_KEY_ONE, `${REVOKED_KEY} revoked key`])
  // Account names never wrap: one line box each, in both tables.
  const lines = (selector: string) =>
    page
      .locator(selector)
      .evaluateAll((nodes) => nodes.map((node) => node.getClientRects().length))
  expect(await lines('#accounts tbody .nowrap')).toEqual([1, 1, 1])
  expect(await lines('#customers tbody .nowrap')).toEqual(Array(10).fill(1))

  // From the page, the journal names the key it sent.
  await page.locator('#customer-credential').selectOption(PERSONA_READ_ONLY_KEY)
  await sendAndSee(page, 'Send POST /v1/customers', '403 Forbidden')
  await eventually(() =>
    journalRows(page).first().locator('td').nth(5).textContent(),
  ).toBe('sk_test_…0001 (persona read-only)')
  // From curl, the masked form fits four of them, and the page says so.
  expect((await curlCustomer('Persona', PERSONA_RATE_LIMITED_KEY)).status).toBe(
    201,
  )
  await eventually(() =>
    journalRows(page).first().locator('td').nth(5).textContent(),
  ).toBe('sk_test_…0001 (one of 4 Persona Account keys)')
})

it('offers a minted token to "Create a customer" instead of switching it there', async () => {
  const page = await open()
  const customerKey = page.locator('#customer-credential')
  await page.locator('#token-credential').selectOption(PERSONA_READ_ONLY_KEY)
  await page.getByLabel('customers:write').uncheck()
  await page.getByLabel('customers:read').check()
  await sendAndSee(page, 'Send POST /v2/tokens', '201 Created')
  const minted = await page.locator('#minted-text').textContent()
  expect(minted).toMatch(
    /^Minted tkn_\w+ \(customers:read\)\. It is now in both credential lists; "Create a customer" still sends what it showed before\.$/,
  )
  // Both forms keep what was chosen in them, and say what they send.
  expect(await customerKey.inputValue()).toBe(DEMO_KEY_ONE)
  expect(await page.locator('#token-credential').inputValue()).toBe(
    PERSONA_READ_ONLY_KEY,
  )
  expect(await page.locator('#customer-credential-shown').textContent()).toBe(
    `Sends Authorization: Bearer ${DEMO_KEY_ONE} (Demo Account One)`,
  )
  await sendAndSee(page, 'Send POST /v1/customers', '201 Created')

  // Chosen on purpose, the token is what the form sends, and says so.
  await page
    .getByRole('button', { name: 'Use it in "Create a customer"' })
    .click()
  expect(
    await page.locator('#customer-credential option:checked').textContent(),
  ).toMatch(/^Token tkn_\w+ \(customers:read\)$/)
  expect(
    await page.locator('#customer-credential-shown').textContent(),
  ).toMatch(
    /^Sends Authorization: Bearer tok_test_…\w{4} \(Token tkn_\w+ \(customers:read\)\)$/,
  )
  await sendAndSee(page, 'Send POST /v1/customers', '403 Forbidden')
  expect(await page.locator('#request').textContent()).not.toContain(
    DEMO_KEY_ONE,
  )
  expect(
    await journalRows(page).first().locator('td').nth(5).textContent(),
  ).toMatch(/^tok_test_…\w{4} \(token tkn_\w+\)$/)
})

it('explains a queued 503 that a 401 left in the queue', async () => {
  const page = await open()
  await page.getByRole('button', { name: 'Fail with 503' }).click()
  await eventually(() => page.locator('#scenarios').textContent()).toBe(
    'Next call of either operation: fail with 503',
  )
  await page.locator('#customer-credential').selectOption(REVOKED_KEY)
  await sendAndSee(page, 'Send POST /v1/customers', '401 Unauthorized')
  expect(await page.locator('#response-note').textContent()).toContain(
    'The queued scenario did not apply: this call was refused at authentication',
  )
  expect(await page.locator('#scenario-why').textContent()).toBe(
    'Still queued: the last call (POST /v1/customers, 401 Unauthorized invalid_credentials) was refused at authentication, which comes before scenarios, so it did not use the queued 503. The next call with a valid credential will.',
  )
  expect(await page.locator('#scenarios').textContent()).toBe(
    'Next call of either operation: fail with 503',
  )

  await page.locator('#customer-credential').selectOption(DEMO_KEY_ONE)
  await sendAndSee(page, 'Send POST /v1/customers', '503 Service Unavailable')
  expect(await page.locator('#scenario-why').isHidden()).toBe(true)
  expect(await page.locator('#response-note').isHidden()).toBe(true)
  expect(await page.locator('#scenarios').textContent()).toBe(
    'None queued: calls answer normally.',
  )
})

it('runs in the page with ?mode=page, its data its own, one switch from the server', async () => {
  const page = await open('?mode=page')
  await eventually(() => page.locator('#status').textContent()).toBe(
    "Running in this page through MSW's service worker.",
  )
  expect(await page.getByLabel('This page alone').isChecked()).toBe(true)
  await page.getByLabel('name').fill('Only In The Page')
  await sendAndSee(page, 'Send POST /v1/customers', '201 Created')
  expect(await customerRows(page).first().textContent()).toContain(
    'Only In The Page',
  )
  // The worker answered: the server holds none of it.
  const state = await serverSays<{ customers: { name: string }[] }>('state')
  expect(state.customers.map((c) => c.name)).not.toContain('Only In The Page')
  const journal = await serverSays<{ requests: unknown[] }>('requests')
  expect(journal.requests).toEqual([])

  // One click back to the server.
  await Promise.all([
    page.waitForURL(/\?mode=server$/),
    page.getByLabel(`The server at ${server.url}`).check(),
  ])
  await page.locator('body[data-ready="true"]').waitFor()
  expect(await page.locator('#status').textContent()).toContain(
    `Showing the sandbox server at ${server.url}`,
  )
  expect(await page.locator('#customers').textContent()).not.toContain(
    'Only In The Page',
  )
})

it('runs in the page and says why where no sandbox server answers', async () => {
  // A static host: the health check is a 404 page.
  const page = await open('', (p) =>
    p.route('**/__sandbox/health', (route) =>
      route.fulfill({
        status: 404,
        contentType: 'text/html',
        body: 'Not found',
      }),
    ),
  )
  await eventually(() => page.locator('#status').textContent()).toContain(
    "Running in this page through MSW's service worker.",
  )
  expect(await page.locator('#status').textContent()).toContain(
    `No sandbox server answers ${server.url}/__sandbox/health`,
  )
  expect(await page.getByLabel('The sandbox server').isDisabled()).toBe(true)
  await sendAndSee(page, 'Send POST /v1/customers', '201 Created')
  const journal = await serverSays<{ requests: unknown[] }>('requests')
  expect(journal.requests).toEqual([])
})

it("from Vite's dev server, runs in the page, and ?server= shows a running server", async () => {
  const dev = await startDevServer({
    configFile: new URL('../playground/vite.config.ts', import.meta.url)
      .pathname,
  })
  try {
    const alone = await browser.page()
    await alone.goto(dev.url)
    await alone.locator('body[data-ready="true"]').waitFor()
    expect(await alone.locator('#status').textContent()).toContain(
      `No sandbox server answers ${dev.url.replace(/\/$/, '')}/__sandbox/health`,
    )

    // Another origin: the server's admin surface grants loopback pages CORS.
    const page = await browser.page()
    await page.goto(`${dev.url}?server=${server.url}`)
    await page.locator('body[data-ready="true"]').waitFor()
    expect(await page.locator('#status').textContent()).toContain(
      `Showing the sandbox server at ${server.url} (another origin)`,
    )
    await sendAndSee(page, 'Send POST /v1/customers', '201 Created')
    const state = await serverSays<{ customers: { name: string }[] }>('state')
    expect(state.customers.at(-1)?.name).toBe('Ada Lovelace')
    await page.getByRole('button', { name: '+1 day' }).click()
    await eventually(
      async () => (await serverSays<{ frozen: boolean }>('clock')).frozen,
    ).toBe(true)
  } finally {
    await dev.server.close()
  }
})

it('says so, and links to page mode, when the server wants its admin token', async () => {
  const guarded = await createSandboxServer({
    port: 0,
    adminToken: 'a'.repeat(32),
  })
  try {
    const page = await browser.page()
    await page.goto(guarded.playgroundUrl!)
    await eventually(() => page.locator('#status').textContent()).toContain(
      `The sandbox at ${guarded.url} does not let this page read it: The sandbox API needs the admin token`,
    )
    await Promise.all([
      page.waitForURL(/\?mode=page$/),
      page
        .getByRole('link', { name: 'Run the playground in this page instead.' })
        .click(),
    ])
    await page.locator('body[data-ready="true"]').waitFor()
    expect(await page.locator('#status').textContent()).toBe(
      "Running in this page through MSW's service worker.",
    )
  } finally {
    await guarded.close()
  }
})

it('keeps its data across a reload once asked to, in page mode', async () => {
  const page = await open('?mode=page')
  // The page reloads to start the worker with persistence on.
  await Promise.all([
    page.waitForEvent('framenavigated'),
    page.getByLabel('Keep the data across reloads').click(),
  ])
  await page.locator('body[data-ready="true"]').waitFor()
  expect(
    await page.getByLabel('Keep the data across reloads').isChecked(),
  ).toBe(true)
  await eventually(() => page.locator('#status').textContent()).toContain(
    'kept in localStorage',
  )
  await page.getByLabel('name').fill('Grace Hopper')
  await page.getByLabel('email').fill('grace@example.com')
  await sendAndSee(page, 'Send POST /v1/customers', '201 Created')

  await page.reload()
  await page.locator('body[data-ready="true"]').waitFor()
  expect(await page.locator('#status').textContent()).toContain(
    'restored from localStorage',
  )
  expect(await customerRows(page).first().textContent()).toContain(
    'Grace Hopper',
  )
})
