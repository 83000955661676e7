// What every /__sandbox/* route runs first: the admin guard, the body, storing the change.
import type { BearerResult } from './auth.ts'
import type { Route, RouteCall, SandboxContext } from './context.ts'
import { SandboxError, type ErrorCode } from './errors.ts'
import { overtaken } from './pipeline.ts'
import { constantTimeEqual } from '../model/secrets.ts'
import {
  checkCharset,
  parseJsonObject,
  readBody,
  validateBody,
} from './validation.ts'
import type { z } from 'zod'

/** What a resolver of the sandbox's own API gets: the request, its URL and a body reader. */
export interface SandboxCall {
  request: Request
  url: URL
  /** Reads and validates the JSON body; an empty body counts as `{}`. */
  body<T>(schema: z.ZodType<T>): Promise<T>
}

function checkAdmin(
  ctx: SandboxContext,
  bearer: BearerResult,
  path: string,
): void {
  const { adminToken } = ctx.options
  if (adminToken === undefined || path === '/__sandbox/health') return
  if (bearer.kind === 'missing') {
    throw new SandboxError(
      'missing_credentials',
      'The sandbox API needs the admin token: "Authorization: Bearer <admin token>".',
      { headers: { 'www-authenticate': 'Bearer realm="sandbox-admin"' } },
    )
  }
  if (
    bearer.kind !== 'bearer' ||
    !constantTimeEqual(bearer.credential, adminToken)
  ) {
    throw new SandboxError(
      'invalid_credentials',
      'That is not the admin token.',
      {
        headers: {
          'www-authenticate':
            'Bearer realm="sandbox-admin", error="invalid_token"',
        },
      },
    )
  }
}

/**
 * Runs a resolver of the sandbox's own API (`/__sandbox/*`): the admin guard, then the
 * resolver once seeding is done; with a data file, a change is stored before
 * it is answered. Errors are thrown, for the core's one catch to render;
 * its calls are kept out of the journal.
 *
 * @example
 * runSandboxCall(ctx, call, async () => json(200, { status: 'ok' }))
 */
export async function runSandboxCall(
  ctx: SandboxContext,
  call: RouteCall,
  resolve: (call: SandboxCall) => Response | Promise<Response>,
  { adminGuard = true }: { adminGuard?: boolean } = {},
): Promise<Response> {
  const { request, path } = call
  // The account-scoped calls are guarded by the account's API key instead.
  if (adminGuard) checkAdmin(ctx, call.state.bearer, path)
  await ctx.ready
  let text: Promise<string> | undefined
  const readText = () => (text ??= readBody(request, ctx.options.maxBodyBytes))
  const sandboxCall: SandboxCall = {
    request,
    get url() {
      return call.url
    },
    async body(schema) {
      checkCharset(request.headers.get('content-type'))
      const read = await readText()
      return validateBody(
        schema,
        read.trim() === '' ? {} : parseJsonObject(read),
      )
    },
  }
  if (!ctx.storage) return resolve(sandboxCall)
  // @note Read whole before the change is decided, its failure kept for
  // the resolver: a replica of a fleet applies nothing of the others'
  // while a change is decided and stored, which a body sent slowly would
  // hold for as long. Asked of the method, which needs no stream: a body
  // that is not there reads as empty. (`request.body` is safe too: on the
  // server it is a stream over this same read, src/runtimes/node.ts.)
  if (request.method !== 'GET' && request.method !== 'HEAD')
    await readText().catch(() => {})
  const { runStored } = await import('./stored-change.ts')
  return runStored(ctx, ctx.storage, call, async () => {
    try {
      return await resolve(sandboxCall)
    } catch (error) {
      // @note A reset or a restore that came while the call waited its
      // turn replaced the data its credential was looked up in (an
      // account's API key; the admin token is checked before the wait),
      // which a replica loading accounts as asked holds none of yet.
      // Said as for an API call it overtook: retry.
      if (
        error instanceof SandboxError &&
        error.code === 'invalid_credentials' &&
        ctx.db !== call.state.db
      ) {
        throw await overtaken(ctx)
      }
      throw error
    }
  })
}

/**
 * Runs `change`, a replacement of the sandbox's data (`reset()`, `load()`
 * or `restore()` of the JavaScript API), and stores it before it settles
 * when the sandbox has a durable store (`stored-change.ts`, loaded with the
 * store). The data it replaces is never read: a replica of a fleet loads
 * none of its accounts first.
 *
 * @example
 * await storeReplacement(ctx, () => unstored.reset(2))
 */
export async function storeReplacement(
  ctx: SandboxContext,
  change: () => Promise<void>,
): Promise<void> {
  if (!ctx.storage) return change()
  const { storeChange: stored } = await import('./stored-change.ts')
  return stored(ctx, ctx.storage, change, () => true, false)
}

type JsonObject = Record<string, unknown>

/** A header component of the document that a surface answer carries. */
export type SurfaceHeader =
  'ETag' | 'CacheControl' | 'CacheControlNoCache' | 'RetryAfter'

/** One answer of a surface call other than its errors. */
export interface SurfaceAnswer {
  /** The JSON body's schema; an answer without one has no body. */
  schema?: JsonObject
  /** Headers besides `X-Request-Id`. */
  headers?: readonly SurfaceHeader[]
}

/** A query or header parameter of a surface call. */
export interface SurfaceParameter {
  name: string
  in: 'query' | 'header'
  required: boolean
  schema: JsonObject
}

/**
 * What the OpenAPI document says of a call of the sandbox's own API,
 * written beside the call: its name, answers, body and parameters. Its
 * words (`SurfaceProse`) are in the handler's `*.docs.ts`, loaded with the
 * document; `handlers/openapi.ts` adds what every such call shares (the
 * tag, the guard's and the edge's errors, `X-Request-Id`).
 */
export interface SurfaceDocument {
  /**
   * A short name a generator turns into a function (`setClock()`), and the
   * key of its words in the `*.docs.ts`. A name that shipped stays
   * (docs/versioning.md).
   */
  operationId: string
  /** Its answers other than errors, by status. */
  answers: Record<number, SurfaceAnswer>
  /** Its optional JSON body, and what JSON Schema adds to the zod schema's. */
  body?: { schema: z.ZodType; anyOf?: JsonObject[] }
  parameters?: readonly SurfaceParameter[]
  /** Codes of its own, listed before the shared ones under their status. */
  throws?: readonly ErrorCode[]
}

/**
 * The words of a surface call's document entry, by its `operationId` in
 * the handler's `*.docs.ts`: kept out of the route so that a page loads
 * them only with the document.
 */
export interface SurfaceProse {
  summary: string
  /** Markdown. */
  description: string
  /** The description of each answer the route declares, by status. */
  answers: Record<number, string>
  /** The body's rule in words, where JSON Schema cannot say it. */
  body?: string
  /** A parameter's description, by its name. */
  parameters?: Record<string, string>
}

/**
 * A route of the sandbox's own API as its handler file declares it: the
 * call, its guard and its document entry. `Env` is what the resolver
 * reaches of one sandbox, given when the route is bound.
 */
export interface SurfaceRoute<Env = unknown> {
  method: Route['method']
  /** After `/__sandbox/` (`clock`), or from the root when it starts with `/`. */
  path: string
  /**
   * Who may call it: the admin token when one is set (`admin`), anyone
   * (`public`), or one of an account's API keys (`account`), which its
   * resolver checks.
   */
  guard: 'admin' | 'public' | 'account'
  document: SurfaceDocument
  resolve: (call: SandboxCall, env: Env) => Response | Promise<Response>
}

/**
 * The path of a surface route after the base, as the router and the
 * document write it.
 *
 * @example
 * surfacePath({ path: 'clock' }) // '/__sandbox/clock'
 */
export const surfacePath = ({ path }: Pick<SurfaceRoute, 'path'>): string =>
  path.startsWith('/') ? path : `/__sandbox/${path}`

/**
 * Binds a declared surface route to one sandbox: a route of the table, run
 * through `runSandboxCall`.
 *
 * @example
 * bindSurfaceRoute(ctx, healthRoute, env)
 */
export function bindSurfaceRoute<Env>(
  ctx: SandboxContext,
  route: SurfaceRoute<Env>,
  env: Env,
): Route {
  const adminGuard = route.guard === 'admin'
  return {
    method: route.method,
    path: surfacePath(route),
    resolve: (call) =>
      runSandboxCall(ctx, call, (inner) => route.resolve(inner, env), {
        adminGuard,
      }),
  }
}

/**
 * A JSON Schema reference to a component schema, for a surface answer.
 *
 * @example
 * schemaRef('SandboxClock') // { $ref: '#/components/schemas/SandboxClock' }
 */
export const schemaRef = (name: string): JsonObject => ({
  $ref: `#/components/schemas/${name}`,
})

/**
 * The schema of an answer that is one list under `key`.
 *
 * @example
 * listOf('scenarios', 'SandboxScenario')
 */
export const listOf = (key: string, name: string): JsonObject => ({
  type: 'object',
  properties: { [key]: { type: 'array', items: schemaRef(name) } },
  required: [key],
})
