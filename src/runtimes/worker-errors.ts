// Why the browser sandbox could not start, in the user's terms: loaded only
// when it fails, so that a page that starts pays nothing for the words.

const PREFIX = '[customer-token-sandbox]'

/**
 * The page is not a secure context: no service worker, no randomUUID.
 *
 * @example
 * throw insecurePage()
 */
export const insecurePage = (): Error =>
  new Error(
    `${PREFIX} The sandbox cannot run at ${location.origin}: browsers give service workers only to secure pages, those served over https or from localhost (127.0.0.1, [::1]). Open the app at http://localhost, or serve it over https (for Vite, server.https with a certificate, as @vitejs/plugin-basic-ssl makes).`,
  )

/**
 * msw's worker did not start from `scriptUrl`: what went wrong, and how to
 * serve the script.
 *
 * @example
 * throw workerNotStarted('/mockServiceWorker.js', error)
 */
export const workerNotStarted = (scriptUrl: string, error: unknown): Error =>
  new Error(
    `${PREFIX} The service worker did not start from ${new URL(scriptUrl, location.href).href}: ${reason((error as Error).message)} Serve msw's mockServiceWorker.js at that URL: copy it into your site's root folder with \`npx msw init <folder>\` (\`npx msw init public\` for Vite), or add sandbox() from customer-token-sandbox/vite to the Vite config, which serves it; or pass serviceWorker: { url } where it is served.`,
    { cause: error },
  )

/**
 * The worker started with a scope that leaves out this page.
 *
 * @example
 * throw pageOutOfScope('/mocks/mockServiceWorker.js', '/mocks/')
 */
export const pageOutOfScope = (scriptUrl: string, scope: string): Error =>
  new Error(
    `${PREFIX} The service worker at ${new URL(scriptUrl, location.href).href} controls ${scope} only, and this page (${location.href}) is outside it, so the sandbox would answer nothing here. Serve mockServiceWorker.js from a folder that contains the page (the site's root: \`npx msw init public\`), or serve it with the header "Service-Worker-Allowed: /" and pass serviceWorker: { url, options: { scope: '/' } }.`,
  )

/** What went wrong, from msw's message without its own advice. */
function reason(message: string): string {
  const browser = /with script \(.*?\): (.*)/.exec(message)
  if (browser) return browser[1]!.trim()
  return message
    .replace(/^\[MSW\]\s*/, '')
    .replace(/\s+/g, ' ')
    .trim()
}
