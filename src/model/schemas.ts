// The zod schemas of every record and of the data format: one schema per shape.
import { OPERATION_NAMES } from './operations.ts'
import { MAX_DELAY_MS } from '../defaults.ts'
import { z } from 'zod'
import {
  NOT_TEXT_PATTERN,
  TEXT_PATTERN,
  VISIBLE_CHARACTER_PATTERN,
  VISIBLE_TEXT_PATTERN,
} from '../_utils.ts'
import { PERSONAS } from './personas.ts'
import { isMaskedSecret } from './secrets.ts'

/**
 * One zod schema per shape: the data model's records, the response bodies
 * of the API, the parts its request bodies are made of, and the bodies of
 * the sandbox's own surface. Each operation's request body schema is in its
 * handler file (`handlers/`).
 */

const isoDate = z.iso.datetime()

/** An account: the owner of API keys, tokens and customers. */
export const AccountRecordSchema = z.object({
  id: z.string(),
  name: z.string(),
  created_at: isoDate,
})

/** A static API key (version 1): every scope, never expires. */
export const ApiKeyRecordSchema = z.object({
  id: z.string(),
  account_id: z.string(),
  secret: z.string(),
  revoked: z.boolean(),
  created_at: isoDate,
  /** A persona key behaves a certain way on every call. */
  persona: z.enum(PERSONAS).optional(),
})

/** A stored customer; `name` and `email` are absent only when made optional. */
export const CustomerRecordSchema = z.object({
  id: z.string(),
  account_id: z.string(),
  name: z.string().optional(),
  email: z.string().optional(),
  created_at: isoDate,
})

/** A stored token (version 2): scoped and expiring. */
export const TokenRecordSchema = z.object({
  id: z.string(),
  account_id: z.string(),
  secret: z.string(),
  scopes: z.array(z.string()),
  expires_in: z.int(),
  expires_at: isoDate,
  created_at: isoDate,
  /** The id of the API key or token that minted it. */
  issued_by: z.string(),
})

/** The customer as the interface shows it: exactly `{ id, name, email }`. */
export const CustomerSchema = z
  .object({
    id: z.string().regex(/^cus_[0-9A-Za-z]{14}$/),
    name: z.string(),
    email: z.string(),
  })
  .strict()

/** The token record that `POST /v2/tokens` answers with. */
export const TokenSchema = z
  .object({
    id: z.string().regex(/^tkn_[0-9A-Za-z]{14}$/),
    token: z.string(),
    token_type: z.literal('Bearer'),
    scopes: z.array(z.string()),
    expires_in: z.int(),
    expires_at: isoDate,
    created_at: isoDate,
  })
  .strict()

/** The scope form of the interface, `<resource>:<access>`. */
export const SCOPE_PATTERN: RegExp = /^[a-z][a-z0-9_-]*:[a-z][a-z0-9_-]*$/

/** The settings the request schemas depend on. */
export interface RequestSchemaSettings {
  unknownFields: 'reject' | 'ignore'
  requiredFields: readonly ('name' | 'email')[]
  nameLength: { min: number; max: number }
  emailMaxLength: number
  scopes: readonly string[]
  maxScopes: number
  expiresIn: { default: number; min: number; max: number }
}

/**
 * Characters as the API counts a name's: code points, not UTF-16 units.
 *
 * @example
 * codePoints('👋') // 1
 */
export const codePoints = (value: string): number => {
  let count = 0
  for (const _ of value) count++
  return count
}

const VISIBLE = new RegExp(VISIBLE_CHARACTER_PATTERN, 'u')
const NOT_TEXT = new RegExp(NOT_TEXT_PATTERN, 'u')

/**
 * A free-text field: `min` to `max` characters as sent, counted in code points
 * as JSON Schema's `minLength`/`maxLength` count them, with no control
 * character (but tab and line breaks) or unpaired surrogate, and (unless
 * `min` is 0) at least one visible character, which a combining mark alone
 * is not. The bounds and the pattern are stated in the generated JSON
 * Schema, so the OpenAPI document says exactly what passes.
 *
 * @example
 * textSchema('name', { min: 1, max: 200 }).safeParse('\u200B') // fails: nothing visible
 */
export function textSchema(
  field: string,
  { min, max }: { min: number; max: number },
) {
  const rule = `${field} must be ${min === max ? min : `${min} to ${max}`} characters long as sent`
  return z
    .string()
    .superRefine((value, ctx) => {
      const length = codePoints(value)
      if (length < min || length > max) {
        ctx.addIssue({
          code: 'custom',
          params: { code: length < min ? 'too_short' : 'too_long' },
          message: `${rule} (got ${length})`,
        })
      } else if (min > 0 && !VISIBLE.test(value)) {
        ctx.addIssue({
          code: 'custom',
          params: { code: 'blank' },
          message: `${field} must contain at least one visible character, not only whitespace, combining marks or characters rendered as nothing (zero-width spaces, bidirectional marks and the like)`,
        })
      } else if (NOT_TEXT.test(value)) {
        ctx.addIssue({
          code: 'custom',
          params: { code: 'invalid_format' },
          message: `${field} must not contain control characters (U+0000-U+001F, U+007F-U+009F, but tab and line breaks) or unpaired surrogates`,
        })
      }
    })
    .meta({
      ...(min > 0 && { minLength: min }),
      maxLength: max,
      pattern: min > 0 ? VISIBLE_TEXT_PATTERN : TEXT_PATTERN,
    })
}

/**
 * The email addresses the sandbox accepts: zod's practical syntax (dot-atoms
 * of letters, digits and `_'+-` before the `@`) with a stricter domain, whose
 * labels are 1–63 letters, digits and inner hyphens and whose last label is
 * 2–63 letters. It is the `pattern` of the OpenAPI document as well, and every
 * address it matches is also a JSON Schema `format: email` (Ajv's, both
 * modes), so the document and the server agree in both directions.
 *
 * @example
 * EMAIL_PATTERN.test('ada@example.com') // true
 * EMAIL_PATTERN.test('a@example-.com') // false: a label ends in "-"
 */
export const EMAIL_PATTERN: RegExp =
  /^(?:[A-Za-z0-9_'+-]+\.)*[A-Za-z0-9_'+-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/

/** The customer the API answers with. */
export type Customer = z.infer<typeof CustomerSchema>
/** The token record the API answers with. */
export type Token = z.infer<typeof TokenSchema>
/** A stored account. */
export type AccountRecord = z.infer<typeof AccountRecordSchema>
/** A stored API key. */
export type ApiKeyRecord = z.infer<typeof ApiKeyRecordSchema>
/** A stored customer. */
export type CustomerRecord = z.infer<typeof CustomerRecordSchema>
/** A stored token. */
export type TokenRecord = z.infer<typeof TokenRecordSchema>

/** The longest `account_name` of `POST /__sandbox/api-keys`, in characters. */
export const ACCOUNT_NAME_MAX = 200

/** Request bodies of the sandbox's own surface. */
export const ResetBodySchema = z
  .object({ seed: z.int().min(0).max(0xffffffff).optional() })
  .strict()
export const ApiKeyBodySchema = z
  .object({
    account_name: textSchema('account_name', {
      min: 1,
      max: ACCOUNT_NAME_MAX,
    }).optional(),
  })
  .strict()
export const ClockBodySchema = z.union([
  z.object({ advance_seconds: z.int() }).strict(),
  z.object({ now: z.iso.datetime({ offset: true }) }).strict(),
])
export const LatencyBodySchema = z
  .object({
    min_ms: z.int().min(0).max(MAX_DELAY_MS),
    max_ms: z.int().min(0).max(MAX_DELAY_MS),
  })
  .strict()
export const SnapshotBodySchema = z
  .object({ name: z.string().regex(/^[\w.-]{1,64}$/) })
  .strict()
export const ScenarioBodySchema = z
  .object({
    operation: z.enum([...OPERATION_NAMES, '*']),
    status: z.int().min(400).max(599).optional(),
    delay_ms: z.int().min(0).max(MAX_DELAY_MS).optional(),
    network_error: z.boolean().optional(),
    times: z.int().min(1).max(1000).optional(),
  })
  .strict()

/** An answer kept for an `Idempotency-Key`, byte for byte. */
const StoredResponseSchema = z.object({
  status: z.int().min(100).max(599),
  headers: z
    .array(z.tuple([z.string().max(8192), z.string().max(8192)]))
    .max(100),
  body: z.string(),
  code: z.string().max(100).optional(),
})

/**
 * An answered `Idempotency-Key` as the data file keeps it: a retry after a
 * restart is still a replay.
 */
export const SavedIdempotencyKeySchema = z.object({
  key: z.string().min(1).max(1024),
  fingerprint: z.string().max(256),
  expires_at: z.number(),
  account: z.string().max(256),
  response: StoredResponseSchema,
})

/** An answered `Idempotency-Key` as the data file keeps it. */
export type SavedIdempotencyKey = z.infer<typeof SavedIdempotencyKeySchema>

/** A queued scenario as the data file keeps it. */
const SavedScenarioSchema = z.object({
  id: z.string().max(100),
  operation: z.enum([...OPERATION_NAMES, '*']),
  remaining: z.int().min(1).max(1000),
  status: z.int().min(400).max(599).optional(),
  delayMs: z.int().min(0).max(MAX_DELAY_MS).optional(),
  networkError: z.boolean().optional(),
})

const LatencySchema = z.union([
  z.literal(false),
  z.object({
    min: z.int().min(0).max(MAX_DELAY_MS),
    max: z.int().min(0).max(MAX_DELAY_MS),
  }),
])

/** The scenario queues and latency as the data file keeps them across a restart. */
export const SavedScenariosSchema = z.object({
  latency: LatencySchema,
  queue: z.array(SavedScenarioSchema),
  accounts: z.array(
    z.object({
      account_id: z.string().max(256),
      queue: z.array(SavedScenarioSchema),
    }),
  ),
})

/** The scenario queues and latency as the data file keeps them. */
export type SavedScenarios = z.infer<typeof SavedScenariosSchema>

/** The format of a sandbox's data, as `--data-file` stores it. */
export const SANDBOX_DATA_FORMAT = 'customer-token-sandbox/data'
/** The version of the data format this release reads and writes. */
export const SANDBOX_DATA_VERSION = 1

/** Everything a sandbox holds, secrets included: the `--data-file` format. */
export const SandboxDataSchema = z
  .object({
    format: z.literal(SANDBOX_DATA_FORMAT),
    version: z.literal(SANDBOX_DATA_VERSION),
    seed: z.int(),
    /** `moved`: a running clock that was set or advanced, to run on from `now`. */
    clock: z.object({
      now: isoDate,
      frozen: z.boolean(),
      moved: z.boolean().optional(),
    }),
    /** Accounts with a clock of their own; absent when none has one. */
    account_clocks: z
      .array(
        z.object({ account_id: z.string(), now: isoDate, frozen: z.boolean() }),
      )
      .optional(),
    accounts: z.array(AccountRecordSchema),
    api_keys: z.array(ApiKeyRecordSchema),
    customers: z.array(CustomerRecordSchema),
    tokens: z.array(TokenRecordSchema),
  })
  .superRefine(refuseSharedIdsAndSecrets)

/**
 * Ids are unique within each kind of record and secrets across keys and
 * tokens, as the sandbox makes them: a copied secret would make a key act
 * for whichever account came last.
 */
function refuseSharedIdsAndSecrets(
  data: Pick<SandboxData, 'accounts' | 'api_keys' | 'customers' | 'tokens'>,
  ctx: z.RefinementCtx,
): void {
  const secrets = new Set<string>()
  for (const kind of ['accounts', 'api_keys', 'customers', 'tokens'] as const) {
    const ids = new Set<string>()
    data[kind].forEach((record, index) => {
      if (ids.has(record.id)) {
        ctx.addIssue({
          code: 'custom',
          path: [kind, index, 'id'],
          message: `${JSON.stringify(record.id.slice(0, 100))} is already the id of another record of ${kind}`,
        })
      }
      ids.add(record.id)
      // Masked secrets share their masks; a masked export is refused as such.
      if (!('secret' in record) || isMaskedSecret(record.secret)) return
      if (secrets.has(record.secret)) {
        ctx.addIssue({
          code: 'custom',
          path: [kind, index, 'secret'],
          message:
            "the secret is already another API key's or token's; each credential needs a secret of its own",
        })
      }
      secrets.add(record.secret)
    })
  }
}

/** Everything a sandbox holds, secrets included. */
export type SandboxData = z.infer<typeof SandboxDataSchema>

/**
 * One entry of the request journal, as `GET /__sandbox/requests` answers it
 * and a session holds it.
 */
export const JournalEntrySchema = z.object({
  request_id: z.string(),
  operation: z.enum(OPERATION_NAMES).nullable(),
  method: z.string(),
  path: z.string(),
  status: z.int(),
  code: z.string().nullable(),
  account_id: z.string().nullable(),
  // @note Only ever masked (maskSecret: a prefix, `…`, at most the last
  // four characters): an entry that held a whole key would show it to
  // whoever reads the journal, another account included.
  credential: z.string().refine(isMaskedSecret).nullable(),
  duration_ms: z.number(),
  at: z.iso.datetime(),
  scenario: z.string().nullable(),
  replayed: z.boolean(),
})

/** The format of a session export. */
export const SESSION_FORMAT = 'customer-token-sandbox/session'
/** The version of the session format this release reads and writes. */
export const SESSION_VERSION = 1

/** A whole session: options, data, clock, journal and id positions, to replay it. */
export const SandboxSessionSchema = z.object({
  format: z.literal(SESSION_FORMAT),
  version: z.literal(SESSION_VERSION),
  exported_at: z.string(),
  options: z.record(z.string(), z.unknown()),
  data: SandboxDataSchema,
  journal: z.array(z.record(z.string(), z.unknown())),
  id_draws: z.partialRecord(
    z.enum([
      'customer',
      'token',
      'tokenSecret',
      'apiKey',
      'apiKeyId',
      'account',
      'request',
    ]),
    z.int().min(0).max(10_000_000),
  ),
})

/** A whole session, as `sandbox.export()` gives it. */
export type SandboxSession = z.infer<typeof SandboxSessionSchema>
