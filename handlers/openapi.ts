// The OpenAPI 3.1 document of one sandbox, folded from its route table and the ledger.
import type {
  OperationDefinition,
  OperationSpec,
} from '../src/request/define-operation.ts'
import { OPERATION_NAMES } from '../src/model/operations.ts'
import {
  surfacePath,
  type SurfaceDocument,
  type SurfaceProse,
  type SurfaceRoute,
} from '../src/request/sandbox-api.ts'
import {
  PIPELINE_STEPS,
  SERVER_EDGE_THROWS,
  SURFACE_STEPS,
} from '../src/request/answer-steps.ts'
import { ACCOUNT_PROSE } from './account.docs.ts'
import { SANDBOX_PROSE } from './sandbox.docs.ts'
import { z } from 'zod'
import { LEDGER } from '../src/assumptions.ts'
import { MAX_DELAY_MS } from '../src/defaults.ts'
import { ERROR_REGISTRY } from '../src/model/error-registry.ts'
import {
  MAX_FIELD_ERRORS,
  PROBLEM_TYPE_BASE,
  problemJson,
  type AnswerHeader,
  type ErrorCode,
  type ErrorFormatter,
  type Throws,
} from '../src/request/errors.ts'
import type { ResolvedOptions } from '../src/options.ts'
import {
  JournalEntrySchema,
  SandboxSessionSchema,
} from '../src/model/schemas.ts'

type JsonObject = Record<string, unknown>

const jsonSchema = (
  schema: z.ZodType,
  io: 'input' | 'output' = 'output',
): JsonObject => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
  }) as JsonObject
  return rest
}

/** Response shapes of the sandbox's own surface, documented and checked in tests. */
const SurfaceSchemas = {
  Health: z.object({ status: z.literal('ok') }),
  HealthDegraded: z.object({
    status: z.literal('degraded'),
    storage: z.object({
      code: z.string(),
      message: z.string(),
      since: z.iso.datetime(),
    }),
  }),
  Clock: z.object({ now: z.iso.datetime(), frozen: z.boolean() }),
  AccountClock: z.object({
    account_id: z.string(),
    now: z.iso.datetime(),
    frozen: z.boolean(),
    own: z.boolean(),
  }),
  Reset: z.object({
    status: z.literal('reset'),
    seed: z.int(),
    now: z.iso.datetime(),
  }),
  CreatedApiKey: z.object({ api_key: z.string(), account_id: z.string() }),
  Scenario: z.object({
    id: z.string(),
    operation: z.enum([...OPERATION_NAMES, '*']),
    status: z.int().nullable(),
    delay_ms: z.int().nullable(),
    network_error: z.boolean(),
    remaining: z.int(),
  }),
  JournalEntry: JournalEntrySchema,
  Assumption: z.object({
    id: z.string(),
    interface: z.string(),
    default: z.string(),
    option: z.string().nullable(),
    value: z.unknown(),
  }),
  Snapshot: z.object({
    name: z.string(),
    created_at: z.iso.datetime(),
    customers: z.int(),
    tokens: z.int(),
  }),
  Latency: z.object({ min_ms: z.int(), max_ms: z.int() }),
  Restored: z.object({ restored: z.string(), now: z.iso.datetime() }),
  // A masked export says so; a full one (`?secrets=include`) has no marker.
  Session: SandboxSessionSchema.extend({
    secrets: z.literal('masked').optional(),
  }),
  State: z.object({
    now: z.iso.datetime(),
    seed: z.int(),
    accounts: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        created_at: z.iso.datetime(),
        api_keys: z.array(
          z.object({
            id: z.string(),
            key: z.string(),
            revoked: z.boolean(),
            created_at: z.iso.datetime(),
          }),
        ),
        customer_count: z.int(),
        token_count: z.int(),
      }),
    ),
    customers: z.array(
      z.object({
        id: z.string(),
        account_id: z.string(),
        name: z.string().optional(),
        email: z.string().optional(),
        created_at: z.iso.datetime(),
      }),
    ),
    tokens: z.array(
      z.object({
        id: z.string(),
        account_id: z.string(),
        token: z.string(),
        scopes: z.array(z.string()),
        expires_in: z.int(),
        expires_at: z.iso.datetime(),
        created_at: z.iso.datetime(),
        issued_by: z.string(),
        expired: z.boolean(),
      }),
    ),
  }),
}

const assumption = (id: string): string => {
  const item = LEDGER.find((entry) => entry.id === id)
  return item
    ? `Sandbox assumption \`${id}\`: ${item.default}${item.option ? ` (option \`${item.option}\`)` : ''}`
    : ''
}

const header = (
  description: string,
  schema: JsonObject = { type: 'string' },
) => ({ description, schema })

const HEADERS = {
  XRequestId: header(
    'The id of this request, also in error bodies and the journal.',
    { type: 'string', pattern: '^req_' },
  ),
  IdempotentReplayed: header(
    '`true` when this answer replays the first answer to the same Idempotency-Key.',
    {
      type: 'string',
      enum: ['true'],
    },
  ),
  WWWAuthenticate: header(
    'The RFC 6750 Bearer challenge, with `error` and `scope` where they apply.',
  ),
  RetryAfter: header('Seconds to wait before trying again.', {
    type: 'string',
    pattern: '^\\d+$',
  }),
  RateLimit: header(
    'IETF draft RateLimit: the remaining quota and seconds to reset, e.g. `"default";r=99;t=30`.',
  ),
  RateLimitPolicy: header(
    'IETF draft RateLimit-Policy: the quota and window, e.g. `"default";q=100;w=60`.',
  ),
  CacheControl: header('`no-store`: the answer carries a full secret.', {
    type: 'string',
    enum: ['no-store'],
  }),
  AcceptPost: header('The media type the operation takes.', {
    type: 'string',
    enum: ['application/json'],
  }),
  AcceptEncoding: header(
    '`identity`: on a body sent compressed or with a transfer coding other than chunked, which the sandbox never decodes.',
    { type: 'string', enum: ['identity'] },
  ),
  ETag: header(
    'Moves with every change the answer shows; send it in `If-None-Match`. Weak (`W/`) while the clock runs.',
    { type: 'string', pattern: '^(W/)?"[^"]*"$' },
  ),
  CacheControlNoCache: header(
    '`no-cache`: ask again before reusing the answer.',
    {
      type: 'string',
      enum: ['no-cache'],
    },
  ),
}

const HEADER_NAMES: Record<keyof typeof HEADERS, string> = {
  XRequestId: 'X-Request-Id',
  IdempotentReplayed: 'Idempotent-Replayed',
  WWWAuthenticate: 'WWW-Authenticate',
  RetryAfter: 'Retry-After',
  RateLimit: 'RateLimit',
  RateLimitPolicy: 'RateLimit-Policy',
  AcceptPost: 'Accept-Post',
  AcceptEncoding: 'Accept-Encoding',
  ETag: 'ETag',
  CacheControlNoCache: 'Cache-Control',
  CacheControl: 'Cache-Control',
}

const headerRefs = (names: (keyof typeof HEADERS)[]) =>
  Object.fromEntries(
    (['XRequestId', ...names] as const).map((name) => [
      HEADER_NAMES[name],
      { $ref: `#/components/headers/${name}` },
    ]),
  )

const problemResponse = (
  codes: readonly ErrorCode[],
  headers: (keyof typeof HEADERS)[] = [],
) => ({
  description: codes
    .map((code) => `\`${code}\`: ${ERROR_REGISTRY[code].when}`)
    .join('\n\n'),
  headers: headerRefs(headers),
  content: {
    'application/problem+json': {
      schema: {
        allOf: [
          { $ref: '#/components/schemas/Problem' },
          {
            type: 'object',
            properties: { code: { type: 'string', enum: codes } },
          },
        ],
      },
    },
  },
})

/** The document's name of the header component an error answer carries. */
const ANSWER_HEADERS: Record<AnswerHeader, keyof typeof HEADERS> = {
  'WWW-Authenticate': 'WWWAuthenticate',
  'Retry-After': 'RetryAfter',
  'Accept-Post': 'AcceptPost',
  'Accept-Encoding': 'AcceptEncoding',
  RateLimit: 'RateLimit',
  'RateLimit-Policy': 'RateLimitPolicy',
}

/** The codes of one error status, and the headers their answers carry. */
interface StatusErrors {
  codes: ErrorCode[]
  headers: AnswerHeader[]
  /** Headers an earlier step set, which follow the codes' own. */
  carried: AnswerHeader[]
}

/**
 * Folds declared codes into error answers by status: each code under its
 * status once, in the order declared, with its headers and those carried.
 */
function foldErrors(
  declared: { throws: Throws; carried?: readonly AnswerHeader[] }[],
): Map<number, StatusErrors> {
  const statuses = new Map<number, StatusErrors>()
  for (const { throws, carried = [] } of declared) {
    for (const [code, headers = []] of Object.entries(throws) as [
      ErrorCode,
      readonly AnswerHeader[] | undefined,
    ][]) {
      const { status } = ERROR_REGISTRY[code]
      let entry = statuses.get(status)
      if (!entry)
        statuses.set(status, (entry = { codes: [], headers: [], carried: [] }))
      if (!entry.codes.includes(code)) entry.codes.push(code)
      for (const name of headers)
        if (!entry.headers.includes(name)) entry.headers.push(name)
      for (const name of carried)
        if (!entry.carried.includes(name)) entry.carried.push(name)
    }
  }
  return statuses
}

const headersOf = ({ headers, carried }: StatusErrors) =>
  [...headers, ...carried.filter((name) => !headers.includes(name))].map(
    (name) => ANSWER_HEADERS[name],
  )

/**
 * The error answers of an API operation, derived from what the pipeline's
 * steps declare (`PIPELINE_STEPS`) and the operation's own `throws`, listed
 * first. A scenario keeps the status it asks for and says
 * `simulated_failure`, so every declared status lists that code too (what a
 * generated client or a validating proxy then expects), and any other
 * status falls to `default`.
 */
const operationErrors = (spec: OperationSpec) => {
  const steps = PIPELINE_STEPS.filter((step) => !step.body || spec.bodyTypes)
  const declared: { throws: Throws; carried: AnswerHeader[] }[] = []
  let carried: AnswerHeader[] = []
  for (const step of steps) {
    carried = [...carried, ...(step.sets ?? [])]
    declared.push({ throws: step.throws, carried })
  }
  // The operation's own step runs last, after every header is set.
  const own: Throws = Object.fromEntries(
    (spec.throws ?? []).map((code) => [code, []]),
  )
  const statuses = foldErrors([{ throws: own, carried }, ...declared])
  // The standalone server's edge answers before the first step; its codes
  // follow those a scenario stands for, so that a status already listed
  // keeps its codes where they were.
  const edge = foldErrors([{ throws: SERVER_EDGE_THROWS }])
  const anyStatus = steps.flatMap((step) => step.anyStatus ?? [])
  const listed = [...new Set([...statuses.keys(), ...edge.keys()])]
  return {
    ...Object.fromEntries(
      listed.map((status) => {
        const entry = statuses.get(status)
        const codes = entry?.codes ?? []
        const edgeCodes = (edge.get(status)?.codes ?? []).filter(
          (code) => !codes.includes(code),
        )
        const edgeEntry = edge.get(status)
        const headers = [
          ...(entry ? headersOf(entry) : []),
          ...(edgeEntry ? headersOf(edgeEntry) : []),
        ].filter((name, at, all) => all.indexOf(name) === at)
        // An answer of the operation's own that an Idempotency-Key replays.
        const replayed = codes.some((code) => spec.replays?.includes(code))
        return [
          status,
          problemResponse(
            [...codes, ...anyStatus, ...edgeCodes],
            replayed ? [...headers, 'IdempotentReplayed'] : headers,
          ),
        ]
      }),
    ),
    ...(anyStatus.length > 0 && { default: SIMULATED }),
  }
}

const SIMULATED = {
  description: `\`simulated_failure\` with a status this operation has no other use for (500 typically): ${ERROR_REGISTRY.simulated_failure.when}`,
  headers: {
    'X-Request-Id': { $ref: '#/components/headers/XRequestId' },
    'Retry-After': { $ref: '#/components/headers/RetryAfter' },
  },
  content: {
    'application/problem+json': {
      schema: { $ref: '#/components/schemas/Problem' },
    },
  },
}

const okJson = (
  description: string,
  schema: JsonObject | undefined,
  headers: readonly (keyof typeof HEADERS)[] = [],
) => ({
  description,
  headers: headerRefs([...headers]),
  ...(schema && { content: { 'application/json': { schema } } }),
})

const ref = (name: string): JsonObject => ({
  $ref: `#/components/schemas/${name}`,
})

const SANDBOX_TAG = {
  name: 'Sandbox',
  description:
    "The sandbox's own surface: inspection, reset, keys, the journal, the clock, scenarios and the assumption ledger. Not part of the imitated API.",
}

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: assumption('idempotency'),
  schema: {
    type: 'string',
    minLength: 1,
    maxLength: 255,
    pattern: '^[\\x20-\\x7e]+$',
  },
}

const SCENARIO_HEADER = {
  name: 'X-Sandbox-Scenario',
  in: 'header',
  required: false,
  description:
    'Sandbox only: `status=<400-599>`, `delay_ms=<0-' +
    MAX_DELAY_MS +
    '>` or `network_error`, joined with `;`, for this request alone, once the credential is accepted. `status=N` answers N with `code: simulated_failure` (listed under each status of this operation, `default` for the others); a simulated 401 or 403 carries `WWW-Authenticate` as a real one does, a 429 or 503 `Retry-After`.',
  schema: { type: 'string' },
}

/** The path item entry of an API operation. */
function describeOperation(
  spec: OperationDefinition<string>,
  options: ResolvedOptions,
): JsonObject {
  const { document } = spec
  const { success } = document
  const pathParameters = spec.params
    ? Object.entries(
        (jsonSchema(spec.params, 'input') as { properties: JsonObject })
          .properties,
      ).map(([name, schema]) => ({ name, in: 'path', required: true, schema }))
    : []
  return {
    tags: [document.tag.name],
    summary: document.summary,
    operationId: spec.operation,
    description: document.description(options, assumption),
    parameters: [
      ...pathParameters,
      // An operation without a body keys no retry.
      ...(spec.bodyTypes ? [IDEMPOTENCY_KEY] : []),
      SCENARIO_HEADER,
    ],
    // The body is a named component (the input shape: fields with a
    // default stay optional), so generated clients get a type by its name.
    ...(spec.body &&
      document.requestName && {
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: ref(document.requestName),
              example: document.example?.(options),
            },
          },
        },
      }),
    responses: {
      [success.status]: {
        description: success.description,
        headers: {
          ...headerRefs([
            ...(spec.bodyTypes ? (['IdempotentReplayed'] as const) : []),
            'RateLimit',
            'RateLimitPolicy',
          ]),
          ...success.headers,
        },
        content: { 'application/json': { schema: ref(success.name) } },
      },
      ...operationErrors(spec),
    },
  }
}

/**
 * The words of every surface route, by `operationId`: each handler file of
 * the route table has its `*.docs.ts`, which only this module imports.
 */
const SURFACE_PROSE: Readonly<Record<string, SurfaceProse>> = {
  ...SANDBOX_PROSE,
  ...ACCOUNT_PROSE,
}

/** The words of a surface route, which its handler's `*.docs.ts` must have. */
function proseOf({ operationId, answers }: SurfaceDocument): SurfaceProse {
  const prose = SURFACE_PROSE[operationId]
  const unsaid = Object.keys(answers).filter(
    (status) => prose?.answers[Number(status)] === undefined,
  )
  if (!prose || unsaid.length > 0) {
    throw new Error(
      `Failed to document ${operationId}: its handler's *.docs.ts has no ${prose ? `description of its answer ${unsaid.join(', ')}` : 'entry for it'}. Add one under "${operationId}".`,
    )
  }
  return prose
}

/** The path item entry of a call of the sandbox's own surface. */
function describeSurface(
  route: Pick<SurfaceRoute, 'document' | 'guard'>,
  options: ResolvedOptions,
): JsonObject {
  const { document, guard } = route
  const prose = proseOf(document)
  const steps = SURFACE_STEPS.filter(
    (step) =>
      (!step.guard || step.guard === guard) &&
      (!step.adminToken || options.adminToken !== undefined) &&
      (!step.body || document.body !== undefined) &&
      (!step.stored || guard !== 'public'),
  )
  const own: Throws = Object.fromEntries(
    (document.throws ?? []).map((code) => [code, []]),
  )
  const errors = foldErrors([{ throws: own }, ...steps])
  const security =
    guard === 'account'
      ? [{ bearerAuth: [] }]
      : guard === 'admin' && options.adminToken !== undefined
        ? [{ adminToken: [] }]
        : []
  const { body } = document
  return {
    tags: [SANDBOX_TAG.name],
    summary: prose.summary,
    description: prose.description,
    operationId: document.operationId,
    security,
    ...(body && {
      requestBody: {
        required: false,
        content: {
          'application/json': {
            schema: {
              ...jsonSchema(body.schema, 'input'),
              // @note The rules that span fields, so that the document
              // refuses what the server refuses.
              ...(prose.body && { description: prose.body }),
              ...(body.anyOf && { anyOf: body.anyOf }),
            },
          },
        },
      },
    }),
    responses: {
      ...Object.fromEntries(
        Object.entries(document.answers).map(([status, answer]) => [
          status,
          okJson(prose.answers[Number(status)]!, answer.schema, answer.headers),
        ]),
      ),
      ...Object.fromEntries(
        [...errors].map(([status, entry]) => [
          status,
          problemResponse(entry.codes, headersOf(entry)),
        ]),
      ),
    },
    ...(document.parameters && {
      // Each parameter's words go before its schema, where they always were.
      parameters: document.parameters.map(({ schema, ...parameter }) => {
        const description = prose.parameters?.[parameter.name]
        return { ...parameter, ...(description && { description }), schema }
      }),
    }),
  }
}

/** The problem format's schemas, which every error answer names. */
const PROBLEM_SCHEMAS = {
  Problem: {
    type: 'object',
    description: `RFC 9457 problem details. ${assumption('errors.shape')}`,
    required: ['type', 'title', 'status', 'detail', 'code', 'request_id'],
    properties: {
      type: {
        type: 'string',
        format: 'uri',
        description: `\`${PROBLEM_TYPE_BASE}<code>\``,
      },
      title: { type: 'string' },
      status: { type: 'integer', minimum: 400, maximum: 599 },
      detail: { type: 'string' },
      code: { type: 'string', enum: Object.keys(ERROR_REGISTRY) },
      request_id: { type: 'string', pattern: '^req_' },
      errors: {
        type: 'array',
        items: ref('FieldError'),
        maxItems: MAX_FIELD_ERRORS,
        description: `The first ${MAX_FIELD_ERRORS} problems with the request's fields.`,
      },
      errors_omitted: {
        type: 'integer',
        minimum: 1,
        description: `How many further problems were left out of \`errors\`.`,
      },
    },
  },
  FieldError: {
    type: 'object',
    required: ['field', 'code', 'message'],
    properties: {
      field: {
        type: 'string',
        description: 'The top-level field or header at fault.',
      },
      pointer: {
        type: 'string',
        description: 'RFC 6901 pointer into the body.',
      },
      code: { type: 'string' },
      message: { type: 'string' },
    },
  },
}

/** A route table, as the document reads it: the operations, then the surface routes. */
export interface DocumentedTable {
  operations: readonly OperationDefinition<string>[]
  // @note Whatever a route's resolver reaches: the document reads its
  // method, path and entry only.
  routes: readonly SurfaceRoute<never>[]
}

/**
 * The document as a fold over a route table: each operation and each
 * surface route contributes its path item entry and the components it
 * names. `operations` are the API's own unless a test gives others.
 *
 * @example
 * documentRouteTable(resolveOptions(), '0.0.0', { operations: [...OPERATIONS, getWidget], routes: SURFACE_ROUTES })
 */
export function documentRouteTable(
  options: ResolvedOptions,
  version: string,
  { operations, routes }: DocumentedTable,
): JsonObject {
  const table = [
    ...operations.map((spec) => ({
      path: spec.path,
      method: spec.method,
      describe: () => describeOperation(spec, options),
    })),
    ...routes.map((route) => ({
      path: surfacePath(route),
      method: route.method,
      describe: () => describeSurface(route, options),
    })),
  ]
  const paths: Record<string, Record<string, JsonObject>> = {}
  for (const { path, method, describe } of table)
    (paths[path] ??= {})[method.toLowerCase()] = describe()

  return describeErrorFormat(options.errorFormat, {
    openapi: '3.1.0',
    info: {
      title: 'Customer and Token Service (sandbox)',
      version,
      summary: 'What the customer-token-sandbox answers, gap by gap.',
      description:
        'The two operations of the Customer and Token Service as the sandbox imitates them, with every assumption it makes where the interface says "not shown" (see `GET /__sandbox/assumptions` and the `x-sandbox-assumption` fields), and the sandbox\'s own calls under `/__sandbox/`.',
      contact: { name: 'customer-token-sandbox maintainers' },
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: options.baseUrl
      ? [
          {
            url: options.baseUrl.href.replace(/\/$/, ''),
            description: 'The API as the sandbox imitates it',
          },
        ]
      : [
          {
            url: '/',
            description: 'The origin this document was fetched from',
          },
          {
            url: 'http://127.0.0.1:4100',
            description: 'The standalone server on its default port',
          },
        ],
    security: [{ bearerAuth: [] }],
    tags: [
      ...new Map(
        operations.map(({ document: { tag } }) => [tag.name, tag]),
      ).values(),
      SANDBOX_TAG,
    ],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: `An API key (\`sk_test_\` and 24 base62 characters: every scope) or a token from POST /v2/tokens. ${assumption('auth.obtaining-keys')}`,
        },
        ...(options.adminToken !== undefined && {
          adminToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'The admin token that guards /__sandbox/.',
          },
        }),
      },
      headers: HEADERS,
      schemas: {
        ...Object.fromEntries(
          operations.flatMap((spec) =>
            spec.body && spec.document.requestName
              ? [
                  [
                    spec.document.requestName,
                    jsonSchema(spec.body(options), 'input'),
                  ],
                ]
              : [],
          ),
        ),
        ...Object.fromEntries(
          operations.map(({ document: { success } }) => [
            success.name,
            {
              ...jsonSchema(success.schema(options)),
              example: success.example(options),
            },
          ]),
        ),
        ...PROBLEM_SCHEMAS,
        ...Object.fromEntries(
          Object.entries(SurfaceSchemas).map(([name, schema]) => [
            `Sandbox${name}`,
            jsonSchema(schema),
          ]),
        ),
      },
    },
  })
}

const renameMedia = (value: unknown, from: string, to: string): unknown =>
  Array.isArray(value)
    ? value.map((item) => renameMedia(item, from, to))
    : value !== null && typeof value === 'object'
      ? Object.fromEntries(
          Object.entries(value).map(([key, item]) => [
            key === from ? to : key,
            renameMedia(item, from, to),
          ]),
        )
      : value

/**
 * With a custom `errorFormat`, errors keep their statuses and headers but not
 * the problem shape: document the media type the formatter answers with and
 * leave the body open, so that the document still describes what is sent.
 */
function describeErrorFormat(
  format: ErrorFormatter,
  document: JsonObject,
): JsonObject {
  if (format === problemJson) return document
  // @note Only the formatter knows its media type: render a sample to learn it.
  const sample = format({
    type: `${PROBLEM_TYPE_BASE}not_found`,
    title: ERROR_REGISTRY.not_found.title,
    status: 404,
    detail: 'A sample problem, rendered to learn the media type.',
    code: 'not_found',
    request_id: 'req_0000000000000000',
  })
  const media =
    sample.headers.get('content-type')?.split(';', 1)[0]!.trim() ||
    'application/json'
  const described = renameMedia(
    document,
    'application/problem+json',
    media,
  ) as JsonObject & { components: { schemas: JsonObject } }
  described.components.schemas.Problem = {
    description:
      'The shape of the custom `errorFormat` option, which replaces RFC 9457 problem details.',
  }
  return described
}
