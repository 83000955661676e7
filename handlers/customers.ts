// POST /v1/customers: the create-customer operation, its body schema and its document.
import { z } from 'zod'
import { createFaker, seedCustomers } from '../fixtures/seed.ts'
import { isoTime } from '../src/model/clock.ts'
import { createIdGenerator, unused } from '../src/model/ids.ts'
import {
  CustomerSchema,
  EMAIL_PATTERN,
  textSchema,
  type RequestSchemaSettings,
} from '../src/model/schemas.ts'
import { defineOperation } from '../src/request/define-operation.ts'
import { SandboxError } from '../src/request/errors.ts'
import { checkRoom } from '../src/request/limits.ts'

/**
 * Builds the request body schema of `POST /v1/customers` for one sandbox's
 * settings; its `.meta()` is what the OpenAPI document adds to each field.
 *
 * @example
 * createCustomerBodySchema(settings).safeParse({ name: 'Ada', email: 'ada@example.com' })
 */
export function createCustomerBodySchema(
  settings: Pick<
    RequestSchemaSettings,
    'unknownFields' | 'requiredFields' | 'nameLength' | 'emailMaxLength'
  >,
) {
  const { min, max } = settings.nameLength
  const name = textSchema('name', settings.nameLength).meta({
    description: `The customer's name, echoed exactly as sent: ${min}–${max} characters (code points) as sent${min > 0 ? ', at least one of them visible (whitespace and the characters Unicode renders as nothing do not count: zero-width spaces and joiners, bidirectional marks and controls, the soft hyphen, variation selectors, Hangul fillers)' : ''}.`,
    'x-sandbox-assumption': 'customer.name-constraints',
  })
  const email = z
    .email({ pattern: EMAIL_PATTERN })
    .max(settings.emailMaxLength)
    .meta({
      description:
        'A practical email address (local@domain.tld), echoed exactly as sent.',
      'x-sandbox-assumption': 'customer.email-constraints',
    })
  const shape = {
    name: settings.requiredFields.includes('name') ? name : name.optional(),
    email: settings.requiredFields.includes('email') ? email : email.optional(),
  }
  return settings.unknownFields === 'reject'
    ? z.object(shape).strict()
    : z.object(shape).strip()
}

/** The request body of `POST /v1/customers`. */
export type CreateCustomerBody = z.infer<
  ReturnType<typeof createCustomerBodySchema>
>

/** The customer the document shows: the first one seed 1 makes. */
function sampleCustomer(): z.infer<typeof CustomerSchema> {
  const [sample] = seedCustomers(createFaker(1), 1)
  const id = createIdGenerator({ seed: 1, deterministic: true, salt: 'seed:' })
  return { id: id('customer'), name: sample!.name, email: sample!.email }
}

/**
 * `POST /v1/customers`: creates a customer in the caller's account and echoes
 * `name` and `email` exactly as sent, adding `id`.
 */
export const createCustomer = defineOperation({
  operation: 'createCustomer',
  method: 'POST',
  path: '/v1/customers',
  scope: 'customers:write',
  bodyTypes: 'json',
  // A retry of a create refused as a duplicate gets the same 409.
  replays: ['email_taken'],
  throws: ['email_taken'],
  body: createCustomerBodySchema,
  document: {
    tag: { name: 'Customers', description: 'Version 1: customer records.' },
    summary: 'Create a customer',
    description: (options, assumption) =>
      `Needs \`customers:write\` (API keys have every scope${options.v1AcceptsTokens ? '; tokens with it are accepted' : '; tokens are refused'}). ${assumption('customer.success-status')}`,
    requestName: 'CreateCustomerRequest',
    example: () => {
      const { name, email } = sampleCustomer()
      return { name, email }
    },
    success: {
      status: 201,
      description: 'The customer, exactly `{ id, name, email }`.',
      name: 'Customer',
      // A field that `requiredFields` makes optional is absent when not sent.
      schema: ({ requiredFields }) =>
        CustomerSchema.partial({
          ...(!requiredFields.includes('name') && { name: true }),
          ...(!requiredFields.includes('email') && { email: true }),
        }),
      example: sampleCustomer,
    },
  },
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
  async execute(ctx, principal, body, now) {
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
    const id = unused(() => ctx.nextId('customer'), db.customerById)

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
})
