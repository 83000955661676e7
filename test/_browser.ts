import { mkdir } from 'node:fs/promises'
import {
  chromium,
  type Browser,
  type BrowserContext,
  type Page,
} from 'playwright-core'
import { createServer, type InlineConfig, type ViteDevServer } from 'vite'
import { afterAll, afterEach, beforeAll, expect, inject } from 'vitest'
import { CHROMIUM_ARGS } from '../scripts/find-chromium.mjs'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import type { SandboxWorker } from '../src/runtimes/browser.ts'
import { sandbox } from '../src/runtimes/vite.ts'

declare global {
  interface Window {
    /** What the test page's `startSandboxWorker()` returned. */
    sandbox: SandboxWorker
    /** The first of two starts, when the page starts the sandbox twice. */
    first?: SandboxWorker
  }
}

/** Where tests keep screenshots; gitignored. */
export const ARTIFACTS = new URL('../test-results/', import.meta.url)

/** Launches the Chromium that the global setup found. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: inject('chromiumPath'),
    args: [...CHROMIUM_ARGS],
  })
}

/**
 * One Chromium for the file and a fresh context (its own service workers and
 * storage) per test; a page error fails the test.
 *
 * @example
 * const browser = useBrowser()
 * const page = await browser.page()
 */
export function useBrowser(): { page(): Promise<Page> } {
  let browser: Browser | undefined
  const contexts: BrowserContext[] = []
  const errors: string[] = []
  beforeAll(async () => {
    browser = await launchChromium()
  })
  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close()
    expect(errors.splice(0), 'errors in the page').toEqual([])
  })
  afterAll(async () => {
    await browser?.close()
  })
  return {
    async page() {
      const context = await browser!.newContext({
        viewport: { width: 1280, height: 900 },
      })
      contexts.push(context)
      const page = await context.newPage()
      page.on('pageerror', (error) => errors.push(error.message))
      return page
    },
  }
}

/** Starts a Vite dev server on a random port of 127.0.0.1. */
export async function startDevServer(
  config: InlineConfig,
): Promise<{ url: string; server: ViteDevServer }> {
  const server = await createServer({
    logLevel: 'error',
    ...config,
    server: { host: '127.0.0.1', port: 0, strictPort: false, ...config.server },
  })
  await server.listen()
  const url = server.resolvedUrls?.local[0]
  if (!url) throw new Error('The Vite dev server has no local URL')
  return { url, server }
}

/**
 * Starts the test page (`test/browser-page/`) on a Vite dev server with the
 * sandbox's plugin, the page starting the sandbox itself.
 *
 * @example
 * const { server, url } = await startTestPage()
 */
export function startTestPage(): Promise<{
  url: string
  server: ViteDevServer
}> {
  return startDevServer({
    configFile: false,
    root: new URL('browser-page/', import.meta.url).pathname,
    plugins: [sandbox({ start: false })],
  })
}

/**
 * The test page with `persist` on, opened in tabs of one browser context
 * (they share the origin's localStorage and worker) for the whole file;
 * each tab's page errors are kept in `errors`.
 *
 * @example
 * const tabs = usePersistedTabs()
 * const [first, second] = [await tabs.open(), await tabs.open()]
 */
export function usePersistedTabs(): {
  open(): Promise<Page>
  errors: string[]
} {
  let server: ViteDevServer | undefined
  let url = ''
  let browser: Browser | undefined
  let context: BrowserContext | undefined
  const errors: string[] = []
  beforeAll(async () => {
    ;({ server, url } = await startTestPage())
    browser = await launchChromium()
    context = await browser.newContext()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })
  return {
    errors,
    async open() {
      const page = await context!.newPage()
      page.on('pageerror', (error) => errors.push(error.message))
      await page.goto(`${url}?persist`)
      await page.locator('#status', { hasText: /ready|restored/ }).waitFor()
      return page
    },
  }
}

/**
 * Creates a customer named `name` from the page with the first demo key.
 *
 * @example
 * expect((await createCustomerIn(page, 'Ada')).status).toBe(201)
 */
export function createCustomerIn(
  page: Page,
  name: string,
): Promise<PageResponse> {
  return postIn(
    page,
    '/v1/customers',
    { name, email: 'tab@example.com' },
    DEMO_KEY_ONE,
  )
}

/** The names of the customers the page's sandbox holds, as its state says. */
export async function customerNamesIn(page: Page): Promise<string[]> {
  return (await fetchIn(page, '/__sandbox/state')).body.customers.map(
    (customer: { name: string }) => customer.name,
  )
}

/** A fetch from the page, as its own code would make it. */
export interface PageResponse {
  status: number
  headers: Record<string, string>
  body: any
}

/**
 * Calls `fetch(path, init)` in the page and returns what the page saw.
 *
 * @example
 * const { status } = await fetchIn(page, '/v1/customers', { method: 'POST' })
 */
export function fetchIn(
  page: Page,
  path: string,
  init: RequestInit = {},
): Promise<PageResponse> {
  return page.evaluate(
    async ([url, options]) => {
      const response = await fetch(url, options)
      const text = await response.text()
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {
        // Not JSON: the text.
      }
      return {
        status: response.status,
        headers: Object.fromEntries(response.headers),
        body,
      }
    },
    [path, init] as const,
  )
}

/** A JSON POST with `Authorization: Bearer key` (none when `key` is null). */
export function postIn(
  page: Page,
  path: string,
  body: unknown,
  key: string | null,
): Promise<PageResponse> {
  return fetchIn(page, path, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key !== null && { authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify(body),
  })
}

/** Saves a full-page screenshot under test-results/ and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS, { recursive: true })
  const path = new URL(`${name}.png`, ARTIFACTS).pathname
  await page.screenshot({ path, fullPage: true })
  return path
}
