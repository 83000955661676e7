import { expect, it } from 'vitest'
import {
  createCustomerIn,
  customerNamesIn,
  fetchIn,
  usePersistedTabs,
} from '../_browser.ts'

// With `persist` on, two tabs that each created a customer before taking in
// the other's save each saved their data whole; each then took in the
// other's save in place of its own, and one of the two 201s was gone from
// both tabs and after a reload. And a request a tab was answering when the
// other tab's save came in failed as a network error ("Failed to fetch").

const tabs = usePersistedTabs()

it('keeps every customer and answers every request when two tabs create customers at the same time', async () => {
  const first = await tabs.open()
  const second = await tabs.open()
  const all: string[] = []
  for (let round = 0; round < 5; round++) {
    const pair = [`Round ${round} first tab`, `Round ${round} second tab`]
    const answers = await Promise.all([
      createCustomerIn(first, pair[0]!),
      createCustomerIn(second, pair[1]!),
    ])
    // Never a network error because the other tab saved meanwhile.
    expect(answers.map((answer) => answer.status)).toEqual([201, 201])
    all.push(...pair)
  }
  // Each tab takes the other's saves in and keeps its own customers.
  for (const page of [first, second]) {
    await expect
      .poll(() => customerNamesIn(page), { timeout: 5000 })
      .toEqual(expect.arrayContaining(all))
  }
  const third = await tabs.open()
  expect(await customerNamesIn(third)).toEqual(expect.arrayContaining(all))

  // A reset is a whole new state: the other tabs take it as it is.
  const reset = await fetchIn(first, '/__sandbox/reset', { method: 'POST' })
  expect(reset.status).toBe(200)
  for (const page of [second, third]) {
    await expect
      .poll(
        async () =>
          (await customerNamesIn(page)).filter((n) => n.startsWith('Round')),
        {
          timeout: 5000,
        },
      )
      .toEqual([])
  }
})
