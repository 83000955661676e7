// The route table and sandbox.fetch: the one way into the sandbox.
import { readBearer } from './auth.ts'
import { isoTime } from '../model/clock.ts'
import type {
  RequestState,
  Route,
  RouteCall,
  SandboxContext,
} from './context.ts'
import { storageProblem } from './storage-problem.ts'
import { reportUnexpected, SandboxError } from './errors.ts'
import type { JournalEntry } from './journal.ts'
import { LimitReachedError, limitReached } from './limits.ts'
import { clip } from './validation.ts'

// What a replica answers while its shared store is away: its health
// (degraded) and the document, which depend on no data.
const ANSWERED_WITHOUT_STORE = new Set(['/__sandbox/health', '/openapi.json'])

/** The sandbox's route table and the one way into it. */
export interface Router {
  /**
   * Answers any request: the route's answer, or a problem for everything
   * else (404, 405 with `Allow`, and what a route throws), rendered in one
   * place. API requests are recorded in the journal. `headers` join the
   * answer as it is built (a server's CORS headers), as the request id does.
   *
   * @example
   * await router.fetch(request, [['access-control-allow-origin', '*']])
   */
  fetch(
    request: Request,
    headers?: readonly [string, string][],
  ): Promise<Response>
  /**
   * Whether the sandbox answers this URL (the API under the base, the sandbox's
   * own API (`/__sandbox/*`) and `/openapi.json`): a server serves its files for the rest.
   */
  owns(href: string): boolean
  /**
   * The methods the path of `href` takes, as `Allow` lists them (HEAD beside
   * GET, and OPTIONS), or `undefined` when no route has that path.
   *
   * @example
   * router.allows('http://localhost/v1/customers') // ['GET', 'HEAD', 'POST', 'OPTIONS']
   */
  allows(href: string): string[] | undefined
  /**
   * Renders an error that arose outside the route table (a server's edge,
   * a request the server could not read, an answer that failed) as the
   * table's own are: a new request id of this sandbox in the body and in
   * `X-Request-Id`, through the configured error format, and as problem
   * JSON when that format itself fails.
   *
   * @example
   * router.answerError(new SandboxError('invalid_host', 'The Host header is not a host.'))
   */
  answerError(error: unknown): Response
  /** The routes, in the order they were given. */
  readonly routes: readonly Route[]
  /** URL patterns of what the sandbox owns, for binding as MSW handlers. */
  readonly patterns: { api: RegExp[]; versioned: RegExp; sandbox: RegExp }
}

const escape = (text: string): string =>
  text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const VERSIONED = /^\/v\d+(?:\/|$)/
const PARAMETER = /:([A-Za-z_]\w*)/g

const isSandboxPath = (path: string): boolean =>
  path === '/__sandbox' ||
  path.startsWith('/__sandbox/') ||
  path === '/openapi.json'

/**
 * The origin and path of a serialised URL, without building a `URL`: a
 * `Request`'s `url` is always serialised, so its path is already normalised.
 */
function splitUrl(href: string): { origin: string; pathname: string } {
  const scheme = href.indexOf('://')
  const slash = href.indexOf('/', scheme + 3)
  if (scheme === -1 || slash === -1) return { origin: href, pathname: '/' }
  let end = href.length
  const query = href.indexOf('?', slash)
  if (query !== -1) end = query
  const hash = href.indexOf('#', slash)
  if (hash !== -1 && hash < end) end = hash
  return { origin: href.slice(0, slash), pathname: href.slice(slash, end) }
}

/** The routes of one path, by method, and how to read its parameters. */
interface PathEntry {
  methods: Map<string, Route>
  pattern?: RegExp
  names: string[]
}

/**
 * Creates the route table of one sandbox and its `fetch`. API routes live
 * under `baseUrl` (any origin when unset); the sandbox's own API answers
 * at the root of the matched origin and under the base path.
 *
 * @example
 * const router = createRouter(ctx, [...OPERATIONS.map((spec) => operationRoute(ctx, spec)), ...surfaceRoutes(ctx, sandbox, { routes: SURFACE_ROUTES, operations: OPERATIONS, exportWithoutRecords, unstored })])
 * await router.fetch(new Request('http://localhost/__sandbox/health'))
 */
export function createRouter(
  ctx: SandboxContext,
  routes: readonly Route[],
): Router {
  const { baseUrl } = ctx.options
  const prefix = baseUrl ? baseUrl.pathname.replace(/\/+$/, '') : ''
  const exact = new Map<string, PathEntry>()
  const parameterised: PathEntry[] = []
  for (const route of routes) {
    let entry = exact.get(route.path)
    if (!entry) {
      const names = [...route.path.matchAll(PARAMETER)].map((m) => m[1]!)
      entry = { methods: new Map(), names }
      if (names.length > 0) {
        const source = route.path
          .split(PARAMETER)
          .map((part, i) => (i % 2 === 0 ? escape(part) : '([^/]+)'))
          .join('')
        entry.pattern = new RegExp(`^${source}$`)
        parameterised.push(entry)
      }
      exact.set(route.path, entry)
    }
    entry.methods.set(route.method, route)
  }
  const operations = routes.filter((route) => route.operation !== undefined)

  const lookup = (
    path: string,
  ): { entry: PathEntry; params: Record<string, string> } | undefined => {
    const entry = exact.get(path)
    if (entry && !entry.pattern) return { entry, params: {} }
    for (const candidate of parameterised) {
      const match = candidate.pattern!.exec(path)
      if (!match) continue
      const params: Record<string, string> = {}
      candidate.names.forEach((name, i) => {
        params[name] = decodeURIComponent(match[i + 1]!)
      })
      return { entry: candidate, params }
    }
    return undefined
  }

  const stripBase = (origin: string, pathname: string): string | undefined => {
    if (!baseUrl) return pathname
    if (origin !== baseUrl.origin) return undefined
    if (pathname === prefix) return '/'
    if (prefix === '' || pathname.startsWith(`${prefix}/`)) {
      return pathname.slice(prefix.length)
    }
    return undefined
  }

  /** Where a request lands: the imitated API or the sandbox's own, and its path after the base. */
  const locate = (
    href: string,
  ):
    | { area: 'api' | 'sandbox'; path: string; pathname: string }
    | { area: undefined; pathname: string } => {
    const { origin, pathname } = splitUrl(href)
    const rest = stripBase(origin, pathname)
    if (rest !== undefined && isSandboxPath(rest)) {
      return { area: 'sandbox', path: rest, pathname }
    }
    if (isSandboxPath(pathname) && (!baseUrl || origin === baseUrl.origin)) {
      return { area: 'sandbox', path: pathname, pathname }
    }
    if (rest !== undefined && (VERSIONED.test(rest) || lookup(rest))) {
      return { area: 'api', path: rest, pathname }
    }
    return { area: undefined, pathname }
  }

  const unrouted = (
    area: 'api' | 'sandbox' | undefined,
    method: string,
    pathname: string,
    allowed: string[] | undefined,
  ): SandboxError => {
    if (allowed) {
      return new SandboxError(
        'method_not_allowed',
        `${clip(pathname)} takes ${allowed.join(', ')}${allowed.length === 1 ? ' only' : ''}, not ${clip(method)}.`,
        { headers: { allow: allowed.join(', ') } },
      )
    }
    const api = operations
      .map((route) => `${route.method} ${route.path}`)
      .join(' and ')
    return new SandboxError(
      'not_found',
      area === 'api'
        ? `${clip(method)} ${clip(pathname)} is not an operation of this API; it has ${api}.`
        : area === 'sandbox'
          ? `${clip(pathname)} is not part of the sandbox API; see GET /__sandbox/assumptions and the README.`
          : `${clip(method)} ${clip(pathname)} is not served here. The API is ${api}; the sandbox's own calls are under /__sandbox/.`,
    )
  }

  const origin = baseUrl
    ? escape(baseUrl.origin)
    : '[a-zA-Z][a-zA-Z0-9+.-]*://[^/?#]+'
  const base = `^${origin}${escape(prefix)}`

  return {
    routes,
    answerError(error) {
      const requestId = ctx.nextId('request')
      // A format that fails is answered as problem JSON by toResponse.
      const response = renderError(
        ctx,
        { requestId, entry: { code: null } },
        error,
      )
      response.headers.set('x-request-id', requestId)
      return response
    },
    owns: (href) => locate(href).area !== undefined,
    allows(href) {
      const place = locate(href)
      if (place.area === undefined) return undefined
      const found = lookup(place.path)
      return found && allowedMethods(found.entry.methods)
    },
    async fetch(request, extraHeaders) {
      // @note A store that replicas share may hold writes this copy has not
      // seen: catch up first, so that nothing is answered from stale state.
      const store = ctx.storage
      const bearer = readBearer(request.headers.get('authorization'))
      // @note The credential names the account whose records the request
      // reads: a store that loads accounts as asked loads that one.
      // What the store holds loaded for this request, until it is answered.
      let release: (() => void) | undefined
      const unsynced = store?.sync
        ? await store
            .sync(bearer.kind === 'bearer' ? bearer.credential : undefined)
            .then(
              (held) => {
                release = held
                return undefined
              },
              (error: Error) => error,
            )
        : undefined
      const href = request.url
      const place = locate(href)
      const requestId = ctx.nextId('request')
      const state: RequestState = {
        requestId,
        started: performance.now(),
        db: ctx.db,
        at: ctx.clock.now(),
        bearer,
        entry: {
          account_id: null,
          credential: bearer.kind === 'missing' ? null : bearer.masked,
          scenario: null,
          replayed: false,
          code: null,
        },
        headers:
          extraHeaders === undefined
            ? [['x-request-id', requestId]]
            : [['x-request-id', requestId], ...extraHeaders],
      }
      let operation: Route['operation'] = undefined
      let response: Response
      try {
        // Health says the store is away; everything else waits for it.
        if (
          unsynced &&
          !ANSWERED_WITHOUT_STORE.has((place as { path?: string }).path ?? '')
        )
          throw await storageProblem(unsynced, store!, {
            // A read was not answered from stale state; nothing to store.
            read: request.method === 'GET' || request.method === 'HEAD',
          })
        const found = place.area === undefined ? undefined : lookup(place.path)
        const route = found && routeFor(found.entry.methods, request.method)
        if (!found || !route) {
          throw unrouted(
            place.area,
            request.method,
            place.pathname,
            found && allowedMethods(found.entry.methods),
          )
        }
        operation = route.operation
        let url: URL | undefined
        const call: RouteCall = {
          request,
          path: (place as { path: string }).path,
          params: found.params,
          get url() {
            return (url ??= new URL(href))
          },
          state,
        }
        response = await route.resolve(call)
      } catch (error) {
        response = renderError(ctx, state, error)
      } finally {
        release?.()
      }
      // @note Response.error() (a scenario's network error) is the one
      // answer with status 0, and its headers cannot be set.
      if (response.status !== 0 && response !== state.answer) {
        const { headers } = response
        for (const [name, value] of state.headers) headers.set(name, value)
      }
      if (request.method === 'HEAD' && response.body !== null) {
        await response.body.cancel()
        response = new Response(null, {
          status: response.status,
          headers: response.headers,
        })
      }
      if (place.area === 'api') {
        record(ctx, state, request.method, place.pathname, operation, response)
      }
      return response
    },
    patterns: {
      api: operations.map(
        (route) =>
          new RegExp(
            `${base}${route.path
              .split(PARAMETER)
              .map((part, i) => (i % 2 === 0 ? escape(part) : '[^/]+'))
              .join('')}$`,
          ),
      ),
      versioned: new RegExp(`${base}/v\\d+(?:/.*)?$`),
      sandbox: new RegExp(
        `^${origin}(?:${escape(prefix)})?/(?:__sandbox(?:/.*)?|openapi\\.json)$`,
      ),
    },
  }
}

/**
 * The route of a method on one path; HEAD runs the GET route (RFC 9110,
 * section 9.3.2), whose body the router then drops, and OPTIONS answers
 * what the path takes (section 9.3.7).
 */
function routeFor(
  methods: ReadonlyMap<string, Route>,
  method: string,
): Pick<Route, 'resolve' | 'operation'> | undefined {
  if (method === 'OPTIONS') {
    const allow = allowedMethods(methods).join(', ')
    return {
      resolve: () =>
        Promise.resolve(
          new Response(null, { status: 204, headers: { allow } }),
        ),
    }
  }
  return (
    methods.get(method) ?? (method === 'HEAD' ? methods.get('GET') : undefined)
  )
}

/**
 * The methods a path takes, as `Allow` lists them: HEAD wherever GET is,
 * and OPTIONS, which every path answers.
 */
function allowedMethods(methods: ReadonlyMap<string, Route>): string[] {
  const allowed = [...methods.keys()]
  const get = allowed.indexOf('GET')
  if (get !== -1 && !methods.has('HEAD')) allowed.splice(get + 1, 0, 'HEAD')
  allowed.push('OPTIONS')
  return allowed
}

const INTERNAL_DETAIL =
  'The sandbox failed to answer this request; this is a bug in the sandbox, please report it with the request id.'

/**
 * Renders anything a route threw as the sandbox's error answer: a
 * `SandboxError` as itself, a reached limit as its problem, and anything
 * else as a `500 internal_error` that is reported with the request id.
 *
 * @example
 * return renderError(ctx, state, new SandboxError('not_found', 'No such path.'))
 */
export function renderError(
  ctx: SandboxContext,
  state: Pick<RequestState, 'requestId'> & {
    entry: Pick<RequestState['entry'], 'code'>
  },
  error: unknown,
): Response {
  const sandboxError =
    error instanceof SandboxError
      ? error
      : error instanceof LimitReachedError
        ? limitReached(error)
        : new SandboxError('internal_error', INTERNAL_DETAIL)
  if (sandboxError.code === 'internal_error')
    reportUnexpected(error, state.requestId)
  state.entry.code = sandboxError.code
  return sandboxError.toResponse(state.requestId, ctx.options.errorFormat)
}

function record(
  ctx: SandboxContext,
  state: RequestState,
  method: string,
  path: string,
  operation: Route['operation'],
  response: Response,
): void {
  // Field by field, not a spread: one object shape for every entry.
  const { entry: part } = state
  const entry: JournalEntry = {
    request_id: state.requestId,
    operation: operation ?? null,
    method,
    path,
    status: response.status,
    account_id: part.account_id,
    credential: part.credential,
    scenario: part.scenario,
    replayed: part.replayed,
    code: part.code,
    duration_ms: Math.round((performance.now() - state.started) * 1000) / 1000,
    at: isoTime(state.at.getTime()),
  }
  // A request begun before a reset stays out of the journal it cleared.
  if (state.db === ctx.db) {
    ctx.journal.record(entry)
    ctx.storage?.journal?.append(entry)
  }
  // @note The user's logger failing is not the request's failure: answered
  // with it, a create stored and then rejected reads as lost, and a retry
  // makes it twice.
  try {
    ctx.options.onRequest?.(entry)
  } catch (error) {
    reportUnexpected(error, entry.request_id)
  }
}
