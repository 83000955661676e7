import { readBearer } from './auth.ts'
import type { SandboxContext } from './context.ts'
import { SandboxError } from './errors.ts'
import { LimitReachedError, limitReached } from './limits.ts'
import { reportUnexpected } from './report.ts'
import { storageUnavailable } from './pipeline.ts'
import { constantTimeEqual } from './secrets.ts'
import { clip, parseJsonObject, readBody, validateBody } from './validation.ts'
import type { z } from 'zod'

/** What a surface resolver gets: the request, its URL and a body reader. */
export interface SurfaceCall {
  request: Request
  url: URL
  /** Reads and validates the JSON body; an empty body counts as `{}`. */
  body<T>(schema: z.ZodType<T>): Promise<T>
}

const render = (
  ctx: SandboxContext,
  requestId: string,
  error: unknown,
): Response => {
  const sandboxError =
    error instanceof SandboxError
      ? error
      : error instanceof LimitReachedError
        ? limitReached(error)
        : new SandboxError(
            'internal_error',
            'The sandbox failed to answer this request.',
          )
  if (sandboxError.code === 'internal_error') reportUnexpected(error, requestId)
  return sandboxError.toResponse(requestId, ctx.options.errorFormat)
}

function checkAdmin(ctx: SandboxContext, request: Request, url: URL): void {
  const { adminToken } = ctx.options
  if (adminToken === undefined || url.pathname.endsWith('/__sandbox/health'))
    return
  const bearer = readBearer(request.headers.get('authorization'))
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
 * Runs a resolver of the sandbox's own surface: admin guard, request id and
 * problem JSON for errors, like the API, but kept out of the journal.
 *
 * @example
 * runSurface(ctx, request, url, async () => json(200, { status: 'ok' }))
 */
export async function runSurface(
  ctx: SandboxContext,
  request: Request,
  url: URL,
  resolve: (call: SurfaceCall) => Response | Promise<Response>,
  { adminGuard = true }: { adminGuard?: boolean } = {},
): Promise<Response> {
  const requestId = ctx.nextId('request')
  let response: Response
  try {
    // The account-scoped calls are guarded by the account's API key instead.
    if (adminGuard) checkAdmin(ctx, request, url)
    await ctx.ready
    response = await resolve({
      request,
      url,
      async body(schema) {
        const text = await readBody(request, ctx.options.maxBodyBytes, {
          streamed: ctx.streamedBodies,
        })
        return validateBody(
          schema,
          text.trim() === '' ? {} : parseJsonObject(text),
        )
      },
    })
    if (
      ctx.storage &&
      request.method !== 'GET' &&
      response.status < 300 &&
      !KEEPS_DATA.test(url.pathname)
    ) {
      // @note Answered only once stored; on failure the change stays in
      // memory and the next write stores the whole state again.
      await ctx.storage.persistState().catch((error: Error) => {
        throw storageUnavailable(error)
      })
    }
  } catch (error) {
    response = render(ctx, requestId, error)
  }
  response.headers.set('x-request-id', requestId)
  return response
}

// The surface calls that change nothing a data file holds.
const KEEPS_DATA =
  /\/__sandbox\/(?:account\/)?(?:scenarios|latency|requests|snapshots)$/

/**
 * A 404 for an unknown `/__sandbox/` path, or a 405 listing the methods a
 * known one takes.
 *
 * @example
 * answerSurfaceError(ctx, request, url, ['GET', 'POST'])
 */
export function answerSurfaceError(
  ctx: SandboxContext,
  request: Request,
  url: URL,
  allowed: string[] | undefined,
): Response {
  const requestId = ctx.nextId('request')
  const error = allowed
    ? new SandboxError(
        'method_not_allowed',
        `${clip(url.pathname)} takes ${allowed.join(', ')}, not ${clip(request.method)}.`,
        {
          headers: { allow: allowed.join(', ') },
        },
      )
    : new SandboxError(
        'not_found',
        `${clip(url.pathname)} is not part of the sandbox API; see GET /__sandbox/assumptions and the README.`,
      )
  const response = render(ctx, requestId, error)
  response.headers.set('x-request-id', requestId)
  return response
}
