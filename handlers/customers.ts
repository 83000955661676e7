import { OPERATIONS } from '../src/request/operations.ts'
import { isoTime } from '../src/model/clock.ts'
import { SandboxError } from '../src/request/errors.ts'
import { checkRoom } from '../src/request/limits.ts'
import type { OperationSpec } from '../src/request/pipeline.ts'
import { validateBody } from '../src/request/validation.ts'

/**
 * `POST /v1/customers`: creates a customer in the caller's account and echoes
 * `name` and `email` exactly as sent, adding `id`.
 */
export const createCustomer: OperationSpec = {
  operation: 'createCustomer',
  ...OPERATIONS.createCustomer,
  scope: 'customers:write',
  bodyTypes: 'json',
  authorize(ctx, principal) {
    if (principal.kind === 'token' && !ctx.options.v1AcceptsTokens) {
      throw new SandboxError(
        'invalid_credentials',
        'POST /v1/customers takes API keys only in this sandbox (v1AcceptsTokens is off).',
        {
          headers: {
            'www-authenticate': 'Bearer realm="sandbox", error="invalid_token"',
          },
        },
      )
    }
  },
  async execute(ctx, principal, raw, now) {
    const body = validateBody(ctx.schemas.customerBody, raw)
    const { db } = ctx
    // @note Nothing is awaited from these checks to the insert, so two
    // concurrent creates can take neither the same id nor the same email.
    if (
      ctx.options.uniqueEmail &&
      body.email !== undefined &&
      db.emailTaken(principal.accountId, body.email)
    ) {
      throw new SandboxError(
        'email_taken',
        `A customer of this account already has the email "${body.email}" (uniqueEmail is on).`,
      )
    }
    checkRoom(db, ctx.options, 'customer', principal.accountId)
    let id: string
    do id = ctx.nextId('customer')
    while (db.customerById(id))

    const customer = await db.insertCustomer({
      id,
      account_id: principal.accountId,
      ...(body.name !== undefined && { name: body.name }),
      ...(body.email !== undefined && { email: body.email }),
      created_at: isoTime(now.getTime()),
    })
    return {
      status: 201,
      created: { customer },
      body: {
        id,
        ...(body.name !== undefined && { name: body.name }),
        ...(body.email !== undefined && { email: body.email }),
      },
    }
  },
}
