import { expect, it } from 'vitest'
import {
  customerRows,
  eventually,
  journalRows,
  sendAndSee,
  usePlayground,
} from '../_playground.ts'

// Issue 17: opened at `/` of the server, the playground ran its own sandbox
// in the page. Customers created with curl never appeared there, and its
// clock and 503 buttons did not touch the server.
const bench = usePlayground()

it('served at /, shows a customer created with curl within a second of page time', async () => {
  const page = await bench.open('', (p) => p.clock.install())
  expect(await page.locator('#status').textContent()).toBe(
    `Showing the sandbox server at ${bench.server.url}: what curl, tests and this page send to it appears here.`,
  )
  expect(
    await page.getByLabel(`The server at ${bench.server.url}`).isChecked(),
  ).toBe(true)
  // The page's timers stand still: only the second run below lets it look.
  await page.clock.pauseAt(Date.now() + 60_000)
  expect((await bench.curlCustomer('Curl Created')).status).toBe(201)
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
  const page = await bench.open()
  type Clock = { now: string; frozen: boolean }
  const before = await bench.serverSays<Clock>('clock')
  await page.getByRole('button', { name: '+1 hour' }).click()
  await eventually(
    async () => (await bench.serverSays<Clock>('clock')).frozen,
  ).toBe(true)
  const after = await bench.serverSays<Clock>('clock')
  expect(Date.parse(after.now) - Date.parse(before.now)).toBeGreaterThanOrEqual(
    3_600_000,
  )
  await eventually(() =>
    page.locator('#clock-now').getAttribute('datetime'),
  ).toBe(after.now)

  await page.locator('#scenario-operation').selectOption('createCustomer')
  await page.getByRole('button', { name: 'Fail with 503' }).click()
  await eventually(() =>
    bench.serverSays<{ scenarios: unknown[] }>('scenarios'),
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
  expect((await bench.curlCustomer('Refused')).status).toBe(503)
  await eventually(() => page.locator('#scenarios').textContent()).toBe(
    'None queued: calls answer normally.',
  )
  await eventually(() => journalRows(page).first().textContent()).toContain(
    '503 Service Unavailable',
  )

  await page.getByRole('button', { name: 'Network error' }).click()
  await page.getByRole('button', { name: 'Clear scenarios' }).click()
  await eventually(() =>
    bench.serverSays<{ scenarios: unknown[] }>('scenarios'),
  ).toEqual({ scenarios: [] })

  expect((await bench.curlCustomer('Kept until reset')).status).toBe(201)
  await page.getByRole('button', { name: 'Reset to the seed' }).click()
  await eventually(
    async () =>
      (await bench.serverSays<{ customers: unknown[] }>('state')).customers
        .length,
  ).toBe(50)
  await eventually(() =>
    page.locator('#customers-count').textContent(),
  ).toContain('50 customers in all')
})

it('runs in the page with ?mode=page, its data its own, one switch from the server', async () => {
  const page = await bench.open('?mode=page')
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
  const state = await bench.serverSays<{ customers: { name: string }[] }>(
    'state',
  )
  expect(state.customers.map((c) => c.name)).not.toContain('Only In The Page')
  const journal = await bench.serverSays<{ requests: unknown[] }>('requests')
  expect(journal.requests).toEqual([])

  // One click back to the server.
  await Promise.all([
    page.waitForURL(/\?mode=server$/),
    page.getByLabel(`The server at ${bench.server.url}`).check(),
  ])
  await page.locator('body[data-ready="true"]').waitFor()
  expect(await page.locator('#status').textContent()).toContain(
    `Showing the sandbox server at ${bench.server.url}`,
  )
  expect(await page.locator('#customers').textContent()).not.toContain(
    'Only In The Page',
  )
})
