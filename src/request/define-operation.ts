// defineOperation(): what a handler file says of its operation.
import type { z } from 'zod'
import type { Principal } from './auth.ts'
import type { Route, SandboxContext } from './context.ts'
import { SandboxError, validationError, type ErrorCode } from './errors.ts'
import type { Operation } from '../model/operations.ts'
import type { CreatedRecord } from '../model/db.ts'
import {
  validateBody,
  type BodyTypes,
  type FieldMessages,
} from './validation.ts'
import type { ResolvedOptions } from '../options.ts'

type JsonObject = Record<string, unknown>

/** What an operation's own step returns: the status and body of its success. */
export interface OperationResult {
  status: number
  body: unknown
  /** Headers of its own, as name-value pairs. */
  headers?: [string, string][]
  /** The record it added, which a server with a data file stores before answering. */
  created?: CreatedRecord
}

/** One operation of the interface, as the pipeline runs it. */
export interface OperationSpec {
  /**
   * Its name in the journal and in scenarios; the API's own are listed in
   * `OPERATION_NAMES` (src/model/operations.ts).
   */
  operation: string
  method: Route['method']
  /**
   * The path after the base, as the document writes it, e.g.
   * `/v1/customers` or `/v1/customers/{id}`: a `{name}` segment is a path
   * parameter, which `params` validates.
   */
  path: string
  /** The scope a token needs; API keys have them all. */
  scope: string
  /**
   * The media types its body may come in; an operation without one takes
   * no body, and the pipeline reads none (nor an `Idempotency-Key`).
   */
  bodyTypes?: BodyTypes
  /**
   * Its own refusals that an idempotent retry replays, as it replays a
   * success (e.g. `email_taken`); any other error leaves the key free.
   */
  replays?: readonly ErrorCode[]
  /**
   * The codes its own step (`authorize`, `execute`) answers with besides
   * those the pipeline's steps declare (`PIPELINE_STEPS`, answer-steps.ts): the document
   * lists them first under their status.
   */
  throws?: readonly ErrorCode[]
  /** Checks the caller may use this operation at all, before the body is read. */
  authorize?: (ctx: SandboxContext, principal: Principal) => void
  /**
   * Validates the body and does the work; throws SandboxError for 4xx.
   * Nothing is awaited between its checks (ids, emails, limits) and its
   * insert, which indexes the record at once: no other request runs in
   * between.
   */
  execute: (
    ctx: SandboxContext,
    principal: Principal,
    body: Record<string, unknown>,
    now: Date,
    params: Record<string, string>,
  ) => Promise<OperationResult>
}

/**
 * What the OpenAPI document says of an operation beyond what every
 * operation shares (credentials, `Idempotency-Key`, `X-Sandbox-Scenario`,
 * the error answers of the pipeline), which `handlers/openapi.ts` adds.
 */
export interface OperationDocument {
  /** The tag that groups the operation, with the tag's description. */
  tag: { name: string; description: string }
  summary: string
  /** Markdown; `assumption(id)` quotes an entry of the assumption ledger. */
  description: (
    options: ResolvedOptions,
    assumption: (id: string) => string,
  ) => string
  /** An example request body, for an operation that takes one. */
  example?: (options: ResolvedOptions) => JsonObject
  /**
   * The request body's component name, e.g. `CreateCustomerRequest`, for an
   * operation that takes one. A name that shipped stays: generated clients
   * import it (docs/versioning.md).
   */
  requestName?: string
  /** The success answer; its body schema becomes a named component. */
  success: {
    status: number
    description: string
    /** The component's name, e.g. `Customer`. */
    name: string
    schema: (options: ResolvedOptions) => z.ZodType
    example: (options: ResolvedOptions) => unknown
    /** Headers of its own, by name, besides `X-Request-Id`, replay and rate limit. */
    headers?: Record<string, { description: string; schema: JsonObject }>
  }
}

/** An operation as its handler file defines it: the spec and its document. */
export interface OperationDefinition<
  Name extends string = Operation,
  Body extends z.ZodType = z.ZodType,
  Params extends PathParams = PathParams,
> extends OperationSpec {
  operation: Name
  /**
   * Builds the request body schema for one sandbox's settings: it validates
   * requests and is the document's request body (its `.meta()` included).
   * An operation without it takes no body.
   */
  body?: (options: ResolvedOptions) => Body
  /**
   * The path parameters' schema, one string field per `{name}` of `path`;
   * a value it refuses is `422 validation_failed` naming the parameter.
   */
  params?: Params
  document: OperationDocument
}

/** The schema of an operation's path parameters: string fields by name. */
export type PathParams = z.ZodObject<Record<string, z.ZodType<string, string>>>

/** What a handler file writes: the definition, with `execute` taking the valid body. */
export type OperationInput<
  Name extends string,
  Body extends z.ZodType,
  Params extends PathParams,
> = Omit<OperationDefinition<Name, Body, Params>, 'execute'> & {
  /** Field-specific wording of validation messages. */
  messages?: (options: ResolvedOptions) => FieldMessages
  /**
   * Does the work with a body that passed `body`'s schema; throws
   * SandboxError for 4xx. Nothing is awaited between its checks (ids,
   * emails, limits) and its insert: no other request runs in between.
   */
  execute: (
    ctx: SandboxContext,
    principal: Principal,
    body: z.output<Body>,
    now: Date,
    params: z.output<Params>,
  ) => Promise<OperationResult>
}

/**
 * Defines an operation of the API in one place: its route (any method,
 * path parameters), scope, body schema if it takes one, document and work.
 * List it in `handlers/index.ts` and it is routed, bound as an MSW handler,
 * targetable by scenarios, journaled and documented.
 *
 * @example
 * // with 'getWidget' added to OPERATION_NAMES (src/model/operations.ts)
 * export const getWidget = defineOperation({
 *   operation: 'getWidget', method: 'GET', path: '/v1/widgets/{id}',
 *   scope: 'widgets:read',
 *   params: z.object({ id: z.string().regex(/^wid_/) }),
 *   document: { ... },
 *   async execute(ctx, principal, body, now, { id }) { return { status: 200, body: { id } } },
 * })
 */
export function defineOperation<
  Name extends string,
  Body extends z.ZodType = z.ZodType<Record<string, never>>,
  Params extends PathParams = z.ZodObject<Record<never, never>>,
>(
  input: OperationInput<Name, Body, Params>,
): OperationDefinition<Name, Body, Params> {
  const { messages, execute, ...definition } = input
  return {
    ...definition,
    // Async, so that a body that fails validation rejects like any other 4xx.
    execute: async (ctx, principal, raw, now, params) =>
      execute(
        ctx,
        principal,
        definition.body
          ? validateBody(
              // @note The sandbox built this schema with `body` from its options.
              ctx.schemas[definition.operation] as z.ZodType<z.output<Body>>,
              raw,
              messages?.(ctx.options),
            )
          : (raw as z.output<Body>),
        now,
        (definition.params
          ? readParams(definition.params, params)
          : params) as z.output<Params>,
      ),
  }
}

/** Validates path parameters as fields, without a pointer into the body. */
function readParams<T>(
  schema: z.ZodType<T>,
  params: Record<string, string>,
): T {
  try {
    return validateBody(schema, params)
  } catch (error) {
    if (!(error instanceof SandboxError) || !error.errors) throw error
    throw validationError(
      error.errors.map(({ field, code, message }) => ({
        field,
        code,
        message,
      })),
    )
  }
}
