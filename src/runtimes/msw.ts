// The sandbox's routes as MSW request handlers.
import { http, type RequestHandler } from 'msw'
import type { Router } from '../request/router.ts'

/**
 * Binds the route table as MSW handlers. Each is one line: every handler
 * calls the sandbox's one `fetch`, which the server reaches without MSW.
 *
 * @example
 * setupServer(...toMswHandlers(router))
 */
export function toMswHandlers(
  router: Pick<Router, 'fetch' | 'patterns'>,
): RequestHandler[] {
  const resolve = ({ request }: { request: Request }) => router.fetch(request)
  const { api, versioned, sandbox } = router.patterns
  return [
    ...api.map((pattern) => http.all(pattern, resolve)),
    http.all(versioned, resolve),
    http.all(sandbox, resolve),
  ]
}
