import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import { createSandboxServer } from '../src/runtimes/node.ts'
import { screenshot, startDevServer } from './_browser.ts'
import {
  customerRows,
  eventually,
  sendAndSee,
  usePlayground,
} from './_playground.ts'

// The built playground (dist/playground), served by the standalone server as
// `npm start` serves it: by default it shows and drives that server.
const bench = usePlayground()

it('clicks through both operations against the server, with the assumptions', async () => {
  const page = await bench.open()
  await sendAndSee(page, 'Send POST /v1/customers', '201 Created')
  const response = await page.locator('#response').textContent()
  expect(response).toContain('HTTP 201 Created')
  expect(response).toMatch(/x-request-id: req_/)
  expect(response).toContain('"name": "Ada Lovelace"')
  expect(await page.locator('#request').textContent()).toContain(
    `POST ${bench.server.url}/v1/customers\ncontent-type: application/json\nauthorization: Bearer ${DEMO_KEY_ONE}`,
  )
  const state = await bench.serverSays<{ customers: { name: string }[] }>(
    'state',
  )
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

it('leaves what did not change in place, so a selection or an open list survives the polling', async () => {
  const page = await bench.open('', (p) => p.clock.install())
  await page.clock.pauseAt(Date.now() + 60_000)
  const mark = () =>
    page.evaluate(() => {
      for (const css of [
        '#customers tbody tr',
        '#accounts tbody tr',
        '#journal tbody tr',
        '#customer-credential option',
      ])
        (document.querySelector(css) as HTMLElement).dataset.kept = 'yes'
    })
  const kept = () =>
    page.evaluate(() => document.querySelectorAll('[data-kept]').length)
  await mark()
  await page.clock.runFor(3000)
  await page.waitForTimeout(300)
  expect(await kept()).toBe(4)
  // A change is shown: the rows it touches are new.
  expect((await bench.curlCustomer('Polled In')).status).toBe(201)
  await page.clock.runFor(1000)
  await eventually(() => customerRows(page).first().textContent()).toContain(
    'Polled In',
  )
  expect(await kept()).toBe(1)
})

it('asks for the state with its ETag, gets 304 while nothing changes, and shows a key minted elsewhere within a second', async () => {
  for (const query of ['', '?mode=page']) {
    const page = await bench.open(query, (p) => p.clock.install())
    await page.clock.pauseAt(Date.now() + 60_000)
    const answers: number[] = []
    page.on('response', (response) => {
      if (new URL(response.url()).pathname === '/__sandbox/state')
        answers.push(response.status())
    })
    // Each poll waits for its answers before it sets the next one, which
    // the page does a moment after the test sees the answer: moved all at
    // once, the paused clock could pass before that timer was set, and no
    // poll came again. It moves in steps, up to a second of the page's time.
    for (let poll = 0; poll < 3; poll++) {
      const before = answers.length
      let moved = 0
      await eventually(async () => {
        if (moved < 1000) {
          await page.clock.runFor(100)
          moved += 100
        }
        return answers.length
      }).toBeGreaterThan(before)
    }
    expect(new Set(answers)).toEqual(new Set([304]))

    // A new account leaves no journal entry: only the state shows it.
    // In page mode, from the page's own code rather than the playground's.
    const mint = { account_name: `Minted elsewhere ${query || 'server'}` }
    const status =
      query === ''
        ? (
            await fetch(`${bench.server.url}/__sandbox/api-keys`, {
              method: 'POST',
              body: JSON.stringify(mint),
            })
          ).status
        : await page.evaluate(
            async (body) =>
              (
                await fetch('/__sandbox/api-keys', {
                  method: 'POST',
                  body: JSON.stringify(body),
                })
              ).status,
            mint,
          )
    expect(status).toBe(201)
    await page.clock.runFor(1000)
    await eventually(() => page.locator('#accounts').textContent()).toContain(
      mint.account_name,
    )
    expect(answers).toContain(200)
  }
})

it('runs in the page and says why where no sandbox server answers', async () => {
  // A static host: the health check is a 404 page.
  const page = await bench.open('', (p) =>
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
    `No sandbox server answers ${bench.server.url}/__sandbox/health`,
  )
  expect(await page.getByLabel('The sandbox server').isDisabled()).toBe(true)
  await sendAndSee(page, 'Send POST /v1/customers', '201 Created')
  const journal = await bench.serverSays<{ requests: unknown[] }>('requests')
  expect(journal.requests).toEqual([])
})

it("from Vite's dev server, runs in the page, and ?server= shows a running server", async () => {
  const dev = await startDevServer({
    configFile: new URL('../playground/vite.config.ts', import.meta.url)
      .pathname,
  })
  try {
    const alone = await bench.browser.page()
    await alone.goto(dev.url)
    await alone.locator('body[data-ready="true"]').waitFor()
    expect(await alone.locator('#status').textContent()).toContain(
      `No sandbox server answers ${dev.url.replace(/\/$/, '')}/__sandbox/health`,
    )

    // Another origin: the server's admin surface grants loopback pages CORS.
    const page = await bench.browser.page()
    await page.goto(`${dev.url}?server=${bench.server.url}`)
    await page.locator('body[data-ready="true"]').waitFor()
    expect(await page.locator('#status').textContent()).toContain(
      `Showing the sandbox server at ${bench.server.url} (another origin)`,
    )
    await sendAndSee(page, 'Send POST /v1/customers', '201 Created')
    const state = await bench.serverSays<{ customers: { name: string }[] }>(
      'state',
    )
    expect(state.customers.at(-1)?.name).toBe('Ada Lovelace')
    await page.getByRole('button', { name: '+1 day' }).click()
    await eventually(
      async () => (await bench.serverSays<{ frozen: boolean }>('clock')).frozen,
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
    const page = await bench.browser.page()
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
  const page = await bench.open('?mode=page')
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
