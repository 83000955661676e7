import { expect, it } from 'vitest'
import {
  createCustomerIn,
  customerNamesIn,
  fetchIn,
  postIn,
  usePersistedTabs,
} from '../_browser.ts'

// With `persist` on, two tabs of one app each kept their own data and saved
// it whole: a customer created (201) in one tab was overwritten by the other
// tab's next save and was gone after a reload. A tab taking in another's
// save keeps its own journal and queued scenarios, which are not saved.

const tabs = usePersistedTabs()

it('keeps the customers each tab created, in every tab and after a reload', async () => {
  const first = await tabs.open()
  const second = await tabs.open()

  // The second tab's own journal and queued scenario, which are not saved.
  expect((await postIn(second, '/v1/customers', {}, null)).status).toBe(401)
  await second.evaluate(() =>
    window.sandbox.scenarios.next('createCustomer', { status: 503 }),
  )

  expect(
    (await createCustomerIn(first, 'Created in the first tab')).status,
  ).toBe(201)
  // The second tab takes what the first saved before it writes its own.
  await expect
    .poll(() => customerNamesIn(second), { timeout: 5000 })
    .toContain('Created in the first tab')
  expect((await createCustomerIn(second, 'Not created: 503')).status).toBe(503)
  expect(
    (await createCustomerIn(second, 'Created in the second tab')).status,
  ).toBe(201)
  const journal = await fetchIn(second, '/__sandbox/requests')
  expect(
    journal.body.requests.map((entry: { status: number }) => entry.status),
  ).toEqual([201, 503, 401])
  await expect
    .poll(() => customerNamesIn(first), { timeout: 5000 })
    .toContain('Created in the second tab')

  const third = await tabs.open()
  expect(await third.locator('#status').textContent()).toBe('restored')
  expect(await customerNamesIn(third)).toEqual(
    expect.arrayContaining([
      'Created in the first tab',
      'Created in the second tab',
    ]),
  )
  expect(tabs.errors).toEqual([])
})
