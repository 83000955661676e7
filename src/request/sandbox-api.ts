// What every /__sandbox/* route runs first: the admin guard, the body, storing the change.
import type { BearerResult } from './auth.ts'
import type { Route, RouteCall, SandboxContext } from './context.ts'
import { SandboxError } from './errors.ts'
import { storageUnavailable } from './errors.ts'
import { StoreConflict } from '../model/store.ts'
import { constantTimeEqual } from '../model/secrets.ts'
import { parseJsonObject, readBody, validateBody } from './validation.ts'
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
  let text: string | undefined
  const sandboxCall: SandboxCall = {
    request,
    get url() {
      return call.url
    },
    async body(schema) {
      text ??= await readBody(request, ctx.options.maxBodyBytes)
      return validateBody(
        schema,
        text.trim() === '' ? {} : parseJsonObject(text),
      )
    },
  }
  const store = ctx.storage
  for (let attempt = 1; ; attempt++) {
    const decidedAt = store?.version?.()
    const response = await resolve(sandboxCall)
    if (
      !store ||
      request.method === 'GET' ||
      response.status >= 300 ||
      KEEPS_DATA.test(path)
    ) {
      return response
    }
    // @note Answered only once stored; on failure the change stays in
    // memory and the next write stores the whole state again.
    try {
      await store.saveState(decidedAt)
      return response
    } catch (error) {
      if (!(error instanceof StoreConflict) || !store.resync)
        throw storageUnavailable(error as Error, store)
    }
    // Another replica changed the state first: make this change again on
    // what the store holds, this copy's own change dropped.
    if (attempt >= 50) {
      throw storageUnavailable(
        Object.assign(new Error('other replicas kept writing first'), {
          code: 'CONFLICT',
        }),
        store,
      )
    }
    await store.resync().catch((error: Error) => {
      throw storageUnavailable(error, store)
    })
  }
}

// The calls that change nothing a data file holds (scenarios and latency
// it keeps, so that a restart brings back the faults still queued).
const KEEPS_DATA = /^\/__sandbox\/(?:account\/)?(?:requests|snapshots)$/

/**
 * A route of the sandbox's own API at `/__sandbox/<path>`, run through
 * `runSandboxCall`.
 *
 * @example
 * sandboxRoute(ctx, 'GET', 'health', () => json(200, { status: 'ok' }))
 */
export function sandboxRoute(
  ctx: SandboxContext,
  method: Route['method'],
  path: string,
  resolve: (call: SandboxCall) => Response | Promise<Response>,
  options?: { adminGuard?: boolean },
): Route {
  return {
    method,
    path: `/__sandbox/${path}`,
    resolve: (call) => runSandboxCall(ctx, call, resolve, options),
  }
}
