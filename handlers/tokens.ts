// POST /v2/tokens: the create-token operation, its body schema and its document.
import { z } from 'zod'
import { isoTime, MAX_CLOCK_MS } from '../src/model/clock.ts'
import { unused } from '../src/model/ids.ts'
import {
  TokenSchema,
  type RequestSchemaSettings,
} from '../src/model/schemas.ts'
import { hasScope, requireScope } from '../src/request/auth.ts'
import { defineOperation } from '../src/request/define-operation.ts'
import { SandboxError, validationError } from '../src/request/errors.ts'
import { checkRoom } from '../src/request/limits.ts'

/**
 * Builds the request body schema of `POST /v2/tokens` for one sandbox's
 * settings; its `.meta()` is what the OpenAPI document adds to each field.
 *
 * @example
 * createTokenBodySchema(settings).safeParse({ scopes: ['customers:read'], expires_in: 600 })
 */
export function createTokenBodySchema(
  settings: Pick<
    RequestSchemaSettings,
    'unknownFields' | 'scopes' | 'maxScopes' | 'expiresIn'
  >,
) {
  const { min, max } = settings.expiresIn
  const [first, ...rest] = settings.scopes
  const scopes = z
    .array(z.enum([first!, ...rest]))
    .min(1)
    .max(settings.maxScopes)
    .superRefine((value, ctx) => {
      const seen = new Set<string>()
      value.forEach((scope, index) => {
        if (seen.has(scope)) {
          ctx.addIssue({
            code: 'custom',
            path: [index],
            params: { code: 'duplicate_scope' },
            message: `scopes[${index}] "${scope}" is listed twice; list each scope once`,
          })
        }
        seen.add(scope)
      })
    })
    .meta({
      uniqueItems: true,
      description:
        'Distinct scopes from the catalog, each `<resource>:<access>`.',
      'x-sandbox-assumption': 'token.scope-catalog',
    })
  const expiresIn = z
    .int()
    .min(min)
    .max(max)
    // @note No JSON Schema `default` here: the body is a named component
    // (`CreateTokenRequest`), and openapi-typescript types a property with a
    // `default` in a component as required, so generated clients would have
    // to send `expires_in`. The description states the default instead.
    .meta({
      description: `Lifetime in seconds, from ${min} to ${max}; ${settings.expiresIn.default} when omitted. The token must end by 9999-12-31T23:59:59.999Z on the sandbox clock, or the answer is \`422 validation_failed\` with an \`out_of_range\` error on \`expires_in\`.`,
      'x-sandbox-assumption': 'token.expires-in',
    })
  const shape = { scopes, expires_in: expiresIn.optional() }
  return settings.unknownFields === 'reject'
    ? z.object(shape).strict()
    : z.object(shape).strip()
}

/** The request body of `POST /v2/tokens`. */
export type CreateTokenBody = z.infer<ReturnType<typeof createTokenBodySchema>>

/**
 * `POST /v2/tokens`: mints a scoped, expiring token for the caller's account.
 * An API key may mint any scope; a token with `tokens:write` only a subset of
 * its own scopes, ending no later than itself.
 */
export const createToken = defineOperation({
  operation: 'createToken',
  method: 'POST',
  path: '/v2/tokens',
  scope: 'tokens:write',
  bodyTypes: 'json-or-text',
  body: createTokenBodySchema,
  messages: ({ expiresIn: { min, max } }) => ({
    expires_in: () =>
      `expires_in must be a whole number of seconds from ${min} to ${max}`,
  }),
  document: {
    tag: { name: 'Tokens', description: 'Version 2: scoped, expiring tokens.' },
    summary: 'Create a token',
    description: (_, assumption) =>
      `Needs an API key, or a token with \`tokens:write\`. ${assumption('auth.token-issuers')} ${assumption('token.content-type')}`,
    requestName: 'CreateTokenRequest',
    example: (options) => ({
      scopes: ['customers:read'],
      expires_in: options.expiresIn.default,
    }),
    success: {
      status: 201,
      description: 'The token record; the secret appears in this answer only.',
      name: 'Token',
      schema: () => TokenSchema,
      example: () => ({
        id: 'tkn_2kR9vQe8LmX4Zp',
        token: 'tok_test_…(32 base62 characters, shown once)',
        token_type: 'Bearer',
        scopes: ['customers:read'],
        expires_in: 3600,
        expires_at: '2026-11-22T12:00:00.000Z',
        created_at: '2026-11-22T11:00:00.000Z',
      }),
      headers: {
        'Cache-Control': {
          description: '`no-store`: the answer carries a secret.',
          schema: { type: 'string', enum: ['no-store'] },
        },
      },
    },
  },
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
  async execute(ctx, principal, body, now) {
    const { min } = ctx.options.expiresIn

    for (const scope of body.scopes) {
      if (!hasScope(principal, scope)) {
        requireScope(
          principal,
          scope,
          `This ${principal.kind === 'token' ? 'token' : 'API key'} can mint only scopes it carries; it lacks "${scope}".`,
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
    const id = unused(() => ctx.nextId('token'), db.tokenById)
    const secret = unused(() => ctx.nextId('tokenSecret'), db.secretHeld)
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
      secret,
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
})
