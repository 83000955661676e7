import type { Page } from 'playwright-core'
import { afterEach, beforeEach, expect } from 'vitest'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import {
  createSandboxServer,
  type SandboxServer,
} from '../src/runtimes/node.ts'
import { useBrowser } from './_browser.ts'

/** The playground's test bench: what a test opens, clicks and asks the server. */
export interface PlaygroundBench {
  /** A fresh page context of the file's Chromium. */
  browser: ReturnType<typeof useBrowser>
  /** This test's server: a new one per test, serving the built playground. */
  readonly server: SandboxServer
  /** Opens the playground at `/` plus `query` and waits until it is usable. */
  open(query?: string, before?: (page: Page) => Promise<unknown>): Promise<Page>
  /** What the server itself says at `/__sandbox/<path>`, as curl would ask. */
  serverSays<T>(path: string): Promise<T>
  /** `POST /v1/customers` from Node, as curl would send it. */
  curlCustomer(name: string, key?: string): Promise<Response>
}

/**
 * A sandbox server per test serving the built playground (dist/playground)
 * as `npm start` serves it, and one Chromium for the file.
 *
 * @example
 * const bench = usePlayground()
 * const page = await bench.open('?mode=page')
 */
export function usePlayground(): PlaygroundBench {
  let server: SandboxServer | undefined
  beforeEach(async () => {
    server = await createSandboxServer({ port: 0 })
  })
  afterEach(() => server?.close())
  const browser = useBrowser()
  const bench: PlaygroundBench = {
    browser,
    get server() {
      if (!server) throw new Error('The server starts before each test')
      return server
    },
    async open(query = '', before) {
      const page = await browser.page()
      await before?.(page)
      await page.goto(`${bench.server.playgroundUrl!}${query}`)
      await page.locator('body[data-ready="true"]').waitFor()
      return page
    },
    async serverSays<T>(path: string) {
      const response = await fetch(`${bench.server.url}/__sandbox/${path}`)
      expect(response.status).toBe(200)
      return (await response.json()) as T
    },
    curlCustomer(name, key = DEMO_KEY_ONE) {
      return fetch(`${bench.server.url}/v1/customers`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ name, email: 'someone@example.com' }),
      })
    },
  }
  return bench
}

/** `expect.poll` with room for a busy machine: it waits, it never times the page. */
export function eventually<T>(
  read: () => T,
): ReturnType<typeof expect.poll<T>> {
  return expect.poll(read, { timeout: 10_000 })
}

/** Clicks a send button and waits until the response panel shows `status`. */
export async function sendAndSee(
  page: Page,
  button: string,
  status: string,
): Promise<void> {
  await page.getByRole('button', { name: button }).click()
  await eventually(() => page.locator('#response-status').textContent()).toBe(
    status,
  )
}

/** The rows of the customers table, newest first. */
export const customerRows = (page: Page) => page.locator('#customers tbody tr')
/** The rows of the request journal, newest first. */
export const journalRows = (page: Page) => page.locator('#journal tbody tr')
