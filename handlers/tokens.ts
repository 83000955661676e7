import { OPERATIONS } from '../src/request/operations.ts'
import { hasScope, requireScope } from '../src/request/auth.ts'
import { isoTime, MAX_CLOCK_MS } from '../src/model/clock.ts'
import { SandboxError, validationError } from '../src/request/errors.ts'
import { checkRoom } from '../src/request/limits.ts'
import type { OperationSpec } from '../src/request/pipeline.ts'
import { validateBody } from '../src/request/validation.ts'

/**
 * `POST /v2/tokens`: mints a scoped, expiring token for the caller's account.
 * An API key may mint any scope; a token with `tokens:write` only a subset of
 * its own scopes, ending no later than itself.
 */
export const createToken: OperationSpec = {
  operation: 'createToken',
  ...OPERATIONS.createToken,
  scope: 'tokens:write',
  bodyTypes: 'json-or-text',
  authorize(ctx, principal) {
    if (principal.kind === 'token' && ctx.options.tokenIssuers === 'api-keys') {
      throw new SandboxError(
        'insufficient_scope',
        'Only API keys may mint tokens in this sandbox (tokenIssuers is "api-keys").',
        {
          headers: {
            'www-authenticate':
              'Bearer realm="sandbox", error="insufficient_scope", scope="tokens:write"',
          },
        },
      )
    }
  },
  async execute(ctx, principal, raw, now) {
    const { min, max } = ctx.options.expiresIn
    const body = validateBody(ctx.schemas.tokenBody, raw, {
      expires_in: () =>
        `expires_in must be a whole number of seconds from ${min} to ${max}`,
    })

    for (const scope of body.scopes) {
      if (!hasScope(principal, scope)) {
        requireScope(
          principal,
          scope,
          `A token can mint only scopes it carries itself; it lacks "${scope}".`,
        )
      }
    }

    let expiresIn = body.expires_in ?? ctx.options.expiresIn.default
    if (principal.expiresAt !== undefined) {
      const left = Math.floor((principal.expiresAt - now.getTime()) / 1000)
      if (body.expires_in === undefined) expiresIn = Math.min(expiresIn, left)
      if (expiresIn > left || expiresIn < min) {
        throw validationError([
          {
            field: 'expires_in',
            pointer: '/expires_in',
            code: 'out_of_range',
            message: `expires_in must end no later than the token that mints it, which has ${left} s left (and be at least ${min})`,
          },
        ])
      }
    }

    const { db } = ctx
    // @note Nothing is awaited from the checks to the insert (see customers).
    checkRoom(db, ctx.options, 'token', principal.accountId)
    let id: string
    do id = ctx.nextId('token')
    while (db.tokenById(id))
    // The expired-tokens persona mints tokens that expire as they are made.
    const lifetimeMs =
      principal.persona === 'expired-tokens' ? 0 : expiresIn * 1000
    // @note The last time a date-time can write bounds every token's end.
    if (now.getTime() + lifetimeMs > MAX_CLOCK_MS) {
      const left = Math.floor((MAX_CLOCK_MS - now.getTime()) / 1000)
      throw validationError([
        {
          field: 'expires_in',
          pointer: '/expires_in',
          code: 'out_of_range',
          message: `expires_in ${expiresIn} would end the token after 9999-12-31T23:59:59.999Z, the latest time the sandbox can write; at the sandbox time ${isoTime(now.getTime())} it can be at most ${left} s${left < min ? `, below the least lifetime (${min} s): move the clock back` : ''}`,
        },
      ])
    }
    const expiresAt = isoTime(now.getTime() + lifetimeMs)
    const createdAt = isoTime(now.getTime())
    const record = await db.insertToken({
      id,
      account_id: principal.accountId,
      secret: ctx.nextId('tokenSecret'),
      scopes: body.scopes,
      expires_in: expiresIn,
      expires_at: expiresAt,
      created_at: createdAt,
      issued_by: principal.id,
    })
    return {
      status: 201,
      created: { token: record },
      // RFC 6749 §5.1: a response that carries a secret is never cached.
      headers: [['cache-control', 'no-store']],
      body: {
        id,
        token: record.secret,
        token_type: 'Bearer',
        scopes: body.scopes,
        expires_in: expiresIn,
        expires_at: expiresAt,
        created_at: createdAt,
      },
    }
  },
}
