import type {
  OperationRoute,
  RequestLike,
  Route,
  SandboxContext,
} from './context.ts'
import { addAdapterHeaders, answerUnrouted } from './pipeline.ts'
import { answerSurfaceError } from './surface.ts'

/** Routes requests to resolvers without MSW: the server and the MSW handlers share it. */
export interface Router {
  /**
   * The sandbox's answer to `request`, or `undefined` when the request is not
   * for the sandbox (another origin, or a path outside the API and `/__sandbox/`).
   */
  handle(request: Request): Promise<Response> | undefined
  /**
   * The operation that answers `method` on `path` (a request's path on the
   * API's origin, base path included, query excluded), bound to that path;
   * `undefined` for anything else, which `handle` then answers. Lets a server
   * answer the operations without building a `Request` or parsing a URL.
   */
  operation(
    method: string,
    path: string,
  ): ((request: RequestLike) => Promise<Response>) | undefined
  /** URL patterns of what `handle` answers, for binding as MSW handlers. */
  readonly patterns: { api: RegExp[]; versioned: RegExp; surface: RegExp }
}

const escape = (text: string): string =>
  text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const VERSIONED = /^\/v\d+(?:\/|$)/

/**
 * Creates the route table of one sandbox. API routes live under `baseUrl`
 * (any origin when unset); the sandbox's own surface answers at the root of
 * the matched origin and under the base path.
 *
 * @example
 * const router = createRouter(ctx, { api: customerRoutes(ctx), surface: [] })
 * await router.handle(new Request('http://localhost/v1/customers', { method: 'POST' }))
 */
export function createRouter(
  ctx: SandboxContext,
  routes: { api: OperationRoute[]; surface: Route[] },
): Router {
  const { baseUrl } = ctx.options
  const prefix = baseUrl ? baseUrl.pathname.replace(/\/+$/, '') : ''
  const table = new Map<string, Map<string, Route>>()
  // The operations build the adapter's headers into their answers; the
  // sandbox's own surface has them added.
  const surface = ctx.responseHeaders
    ? routes.surface.map((route): Route => ({
        ...route,
        resolve: (request, url) =>
          route
            .resolve(request, url)
            .then((response) => addAdapterHeaders(ctx, request, response)),
      }))
    : routes.surface
  const api = routes.api.map((route): Route => ({
    method: route.method,
    path: route.path,
    resolve: (request, url) => route.resolve(request, url.pathname),
  }))
  for (const route of [...api, ...surface]) {
    const methods = table.get(route.path) ?? new Map<string, Route>()
    methods.set(route.method, route)
    table.set(route.path, methods)
  }

  const operations = new Map(routes.api.map((route) => [route.path, route]))

  const stripBase = (url: URL): string | undefined => {
    if (!baseUrl) return url.pathname
    if (url.origin !== baseUrl.origin) return undefined
    if (url.pathname === prefix) return '/'
    if (prefix === '' || url.pathname.startsWith(`${prefix}/`)) {
      return url.pathname.slice(prefix.length)
    }
    return undefined
  }
  const isSurface = (path: string): boolean =>
    path === '/__sandbox' ||
    path.startsWith('/__sandbox/') ||
    path === '/openapi.json'

  const origin = baseUrl
    ? escape(baseUrl.origin)
    : '[a-zA-Z][a-zA-Z0-9+.-]*://[^/?#]+'
  const base = `^${origin}${escape(prefix)}`

  return {
    handle(request) {
      const url = new URL(request.url)
      const rest = stripBase(url)
      let path: string | undefined
      if (rest !== undefined && isSurface(rest)) path = rest
      else if (
        isSurface(url.pathname) &&
        (!baseUrl || url.origin === baseUrl.origin)
      )
        path = url.pathname
      else if (rest !== undefined && (table.has(rest) || VERSIONED.test(rest)))
        path = rest
      if (path === undefined) return undefined

      const methods = table.get(path)
      const route = methods?.get(request.method)
      if (route) return route.resolve(request, url)
      if (isSurface(path)) {
        return Promise.resolve(
          addAdapterHeaders(
            ctx,
            request,
            answerSurfaceError(
              ctx,
              request,
              url,
              methods ? [...methods.keys()] : undefined,
            ),
          ),
        )
      }
      return Promise.resolve(
        answerUnrouted(
          ctx,
          request,
          url,
          methods ? 'method_not_allowed' : 'not_found',
        ),
      )
    },
    operation(method, path) {
      let rest: string | undefined = path
      if (prefix !== '') {
        rest = path.startsWith(`${prefix}/`)
          ? path.slice(prefix.length)
          : undefined
      }
      const route = rest === undefined ? undefined : operations.get(rest)
      if (route?.method !== method) return undefined
      return (request) => route.resolve(request, path)
    },
    patterns: {
      api: api.map((route) => new RegExp(`${base}${escape(route.path)}$`)),
      versioned: new RegExp(`${base}/v\\d+(?:/.*)?$`),
      surface: new RegExp(
        `^${origin}(?:${escape(prefix)})?/(?:__sandbox(?:/.*)?|openapi\\.json)$`,
      ),
    },
  }
}
