/**
 * Where the playground's data lives: a sandbox server (the one that served
 * the page, or one named with `?server=`), or the page itself through MSW's
 * service worker.
 */
export type Mode =
  | {
      kind: 'server'
      /** The origin of the server the page shows and drives. */
      origin: string
      /** The same origin: a server answered there. */
      server: string
      note?: undefined
    }
  | {
      kind: 'page'
      /** A server that answered, when the page runs on its own anyway. */
      server?: string
      /** Why the page runs on its own, when nobody asked it to. */
      note?: string
    }

// A health check that takes longer is no server worth showing.
const PROBE_TIMEOUT_MS = 3000

/**
 * Whether a sandbox server answers at `origin`: its health check is JSON with
 * a status. A static host or Vite's dev server answers a 404 or the page.
 *
 * @example
 * await isSandboxServer('http://127.0.0.1:4100', fetch) // true under `npm start`
 */
export async function isSandboxServer(
  origin: string,
  fetcher: typeof fetch,
): Promise<boolean> {
  try {
    const response = await fetcher(`${origin}/__sandbox/health`, {
      cache: 'no-store',
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    })
    if (!/\bjson\b/.test(response.headers.get('content-type') ?? ''))
      return false
    const { status } = (await response.json()) as { status?: unknown }
    return status === 'ok' || status === 'degraded'
  } catch {
    return false
  }
}

/**
 * Picks the mode from the page's URL: `?mode=page` runs in the page,
 * `?mode=server` (the default) shows the server that served the page, or
 * the one `?server=http://host:port` names (from Vite's dev server, say).
 * Without a server answering, the page runs on its own and says why.
 *
 * @example
 * await chooseMode('http://127.0.0.1:4100/?mode=page', fetch) // { kind: 'page', server: 'http://127.0.0.1:4100' }
 */
export async function chooseMode(
  href: string,
  fetcher: typeof fetch,
): Promise<Mode> {
  const url = new URL(href)
  const asked = url.searchParams.get('mode')
  const named = url.searchParams.get('server')
  let origin = url.origin
  if (named !== null) {
    try {
      origin = new URL(named).origin
    } catch {
      return {
        kind: 'page',
        note: `The server parameter ${JSON.stringify(named)} is not a URL such as http://127.0.0.1:4100, so the sandbox runs in this page.`,
      }
    }
  }
  const answered = await isSandboxServer(origin, fetcher)
  if (asked === 'page')
    return answered ? { kind: 'page', server: origin } : { kind: 'page' }
  if (answered) return { kind: 'server', origin, server: origin }
  // @note A server that runs and refuses this page's origin (CORS) fails
  // the check as one that does not run: the page cannot tell them apart.
  if (named !== null && origin !== url.origin) {
    return {
      kind: 'page',
      note: `No sandbox server answers ${origin}/__sandbox/health to this page, so the sandbox runs in it. Start the server (npx customer-token-sandbox), or, if it runs, let this page's origin use its admin surface: --admin-origins ${url.origin}.`,
    }
  }
  return {
    kind: 'page',
    note: `No sandbox server answers ${origin}/__sandbox/health (a static host or Vite's dev server), so the sandbox runs in this page; add ?server=http://127.0.0.1:4100 to show a running server instead.`,
  }
}
