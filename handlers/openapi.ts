// The OpenAPI 3.1 document of one sandbox, folded from its handlers and the ledger.
import { OPERATIONS } from './index.ts'
import type { OperationDocument } from '../src/request/define-operation.ts'
import { OPERATION_NAMES } from '../src/model/operations.ts'
import { z } from 'zod'
import { LEDGER } from '../src/assumptions.ts'
import { MAX_DELAY_MS } from '../src/defaults.ts'
import {
  ERROR_REGISTRY,
  MAX_FIELD_ERRORS,
  PROBLEM_TYPE_BASE,
  problemJson,
  type ErrorCode,
  type ErrorFormatter,
} from '../src/request/errors.ts'
import type { ResolvedOptions } from '../src/options.ts'
import {
  ApiKeyBodySchema,
  ClockBodySchema,
  ResetBodySchema,
  LatencyBodySchema,
  ScenarioBodySchema,
  SandboxSessionSchema,
  SnapshotBodySchema,
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
  JournalEntry: z.object({
    request_id: z.string(),
    operation: z.enum(OPERATION_NAMES).nullable(),
    method: z.string(),
    path: z.string(),
    status: z.int(),
    code: z.string().nullable(),
    account_id: z.string().nullable(),
    credential: z.string().nullable(),
    duration_ms: z.number(),
    at: z.iso.datetime(),
    scenario: z.string().nullable(),
    replayed: z.boolean(),
  }),
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

/** The codes and headers of one error status of an operation. */
type ErrorSpec = [codes: ErrorCode[], headers?: (keyof typeof HEADERS)[]]

// Every answer after the rate limit's check carries its headers, when it is on.
const RATE_LIMITED: (keyof typeof HEADERS)[] = ['RateLimit', 'RateLimitPolicy']

/** The error answers the pipeline gives every operation of the API. */
const PIPELINE_ERRORS: Record<number, ErrorSpec> = {
  400: [['invalid_json'], RATE_LIMITED],
  401: [
    ['missing_credentials', 'invalid_credentials', 'token_expired'],
    ['WWWAuthenticate'],
  ],
  403: [['insufficient_scope'], ['WWWAuthenticate', ...RATE_LIMITED]],
  409: [
    ['idempotency_in_progress', 'limit_reached'],
    ['RetryAfter', ...RATE_LIMITED],
  ],
  413: [['payload_too_large'], RATE_LIMITED],
  415: [['unsupported_media_type'], ['AcceptPost', ...RATE_LIMITED]],
  422: [['validation_failed', 'idempotency_key_reused'], RATE_LIMITED],
  429: [['rate_limited'], ['RetryAfter', ...RATE_LIMITED]],
  // @note A scenario's 503 shares the status with a failed write.
  503: [['storage_unavailable'], ['RetryAfter', ...RATE_LIMITED]],
}

/**
 * The error answers of an API operation: its own codes before the
 * pipeline's. A scenario keeps the status it asks for and says
 * `simulated_failure`, so every declared status lists that code too (what a
 * generated client or a validating proxy then expects), and any other
 * status falls to `default`.
 */
const operationErrors = (
  own: OperationDocument['errors'] = {},
  replays: readonly ErrorCode[] = [],
) => {
  const statuses = new Set(
    [...Object.keys(PIPELINE_ERRORS), ...Object.keys(own)].map(Number),
  )
  return {
    ...Object.fromEntries(
      [...statuses].map((status) => {
        const [codes = [], headers = []] = PIPELINE_ERRORS[status] ?? []
        // An answer of the operation's own that an Idempotency-Key replays.
        const replayed = own[status]?.some((code) => replays.includes(code))
        return [
          status,
          problemResponse(
            [...(own[status] ?? []), ...codes, 'simulated_failure'],
            replayed ? [...headers, 'IdempotentReplayed'] : headers,
          ),
        ]
      }),
    ),
    default: SIMULATED,
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
  schema: JsonObject,
  status = 200,
  headers: (keyof typeof HEADERS)[] = [],
) => ({
  [status]: {
    description,
    headers: headerRefs(headers),
    content: { 'application/json': { schema } },
  },
})

/**
 * What each call of the sandbox's own surface does, by its summary: the
 * `description` of its operation.
 */
const SURFACE_DESCRIPTIONS = {
  'Health check':
    'Answers 200 while the sandbox serves and stores; 503 `degraded` after a failed write of the data file. Needs no credential.',
  'Inspect state':
    'Every account with its masked keys, every customer and every token (masked secrets), and the sandbox time.',
  'Reset to the seed':
    'Puts the data back to the fixtures and the seeded customers (of `seed` when given), and clears the clock, the journal and the scenarios.',
  'Mint an API key':
    'Creates an account and its `sk_test_` key; the key is shown in this answer only.',
  'Read the journal':
    'The requests the API operations answered, newest first, with masked credentials; `limit` keeps the newest N.',
  'Clear the journal': 'Empties the request journal.',
  'Read the clock':
    'The sandbox time that drives `created_at`, expiry and idempotency windows, and whether it is frozen.',
  'Set or advance the clock':
    'Moves the sandbox clock by `advance_seconds` or to `now`; by default it stays there until moved again (`clockAfterSet: "running"` lets it run on). A move that would leave the years 0000 to 9999 is `422 out_of_range`.',
  'List scenarios': 'The queued scenarios, oldest first.',
  'Queue a scenario':
    'Makes the next `times` calls of `operation` fail with `status` (code `simulated_failure`), wait `delay_ms` or drop the connection.',
  'Clear scenarios':
    'Empties the scenario queue and puts the global latency back to its option.',
  'List snapshots': 'The snapshots taken, oldest first.',
  'Take a snapshot':
    'Saves the data and the clock under `name`, to restore them later; the same name replaces the earlier snapshot.',
  'Restore a snapshot':
    'Puts back the data and the clock of the snapshot `name`; the journal and the scenarios stay as they are.',
  'Read the global latency':
    'The range of milliseconds every API call waits before it is answered.',
  'Set the global latency':
    'Makes every API call wait a uniformly drawn time from `min_ms` to `max_ms`.',
  'Remove the global latency': 'API calls no longer wait: 0–0.',
  'Export the session':
    'The whole session (options, data, clock, journal, id positions) to replay it with `createSandbox({ from })` or `--from`.',
  'Read the assumption ledger':
    'Every "not shown" item of the interface with the default the sandbox assumes, its option and its current value.',
  'Read the account clock':
    "The clock of the account whose API key is the Bearer credential: its own (`own: true`) once set or advanced, the sandbox clock otherwise. It drives that account's `created_at`, token expiry and journal times; idempotency and rate-limit windows stay on the sandbox clock.",
  'Set or advance the account clock':
    'Gives the account a clock of its own, starting from the sandbox time, and moves it; other accounts and the sandbox clock stay where they are (like a Stripe test clock).',
  'Drop the account clock': 'The account follows the sandbox clock again.',
  'List the account scenarios':
    "The scenarios queued for the account's own calls.",
  'Queue an account scenario':
    "Fails or delays the account's next matching calls; only requests authenticated as the account consume it, before the sandbox-wide queue. `limits.scenarios` bounds each account's queue and all of them together.",
  'Clear the account scenarios': "Empties the account's queue.",
  'Read the account journal':
    "The journal's entries of requests authenticated as the account, newest first (a view of the journal, so `journalLimit` bounds it).",
  'Clear the account journal':
    "Hides the account's entries so far from this view; the sandbox journal keeps them.",
  'Read this document':
    'This OpenAPI 3.1 document, generated from the schemas the handlers validate with and the options in force. Needs no credential.',
} as const

/**
 * The `operationId` of each call of the sandbox's own surface, by its
 * summary: short names a generator turns into functions (`setClock()`).
 * They replaced `sandbox` + the summary in camel case
 * (`sandboxSetOrAdvanceTheClock`) as a deliberate break recorded in the
 * changelog; a name that ships stays (docs/versioning.md).
 */
const SURFACE_OPERATION_IDS = {
  'Health check': 'getHealth',
  'Inspect state': 'getState',
  'Reset to the seed': 'reset',
  'Mint an API key': 'createApiKey',
  'Read the journal': 'listRequests',
  'Clear the journal': 'clearRequests',
  'Read the clock': 'getClock',
  'Set or advance the clock': 'setClock',
  'List scenarios': 'listScenarios',
  'Queue a scenario': 'queueScenario',
  'Clear scenarios': 'clearScenarios',
  'List snapshots': 'listSnapshots',
  'Take a snapshot': 'createSnapshot',
  'Restore a snapshot': 'restoreSnapshot',
  'Read the global latency': 'getLatency',
  'Set the global latency': 'setLatency',
  'Remove the global latency': 'clearLatency',
  'Export the session': 'exportSession',
  'Read the assumption ledger': 'listAssumptions',
  'Read the account clock': 'getAccountClock',
  'Set or advance the account clock': 'setAccountClock',
  'Drop the account clock': 'clearAccountClock',
  'List the account scenarios': 'listAccountScenarios',
  'Queue an account scenario': 'queueAccountScenario',
  'Clear the account scenarios': 'clearAccountScenarios',
  'Read the account journal': 'listAccountRequests',
  'Clear the account journal': 'clearAccountRequests',
  'Read this document': 'getOpenApiDocument',
} as const satisfies Record<keyof typeof SURFACE_DESCRIPTIONS, string>

const ref = (name: string): JsonObject => ({
  $ref: `#/components/schemas/${name}`,
})

/**
 * The OpenAPI 3.1 document of exactly what one sandbox answers, generated
 * from the zod schemas its handlers validate with and the options in force.
 *
 * @example
 * const document = createOpenApiDocument(sandbox.options)
 * document.paths['/v1/customers'].post.requestBody
 */
export function createOpenApiDocument(
  options: ResolvedOptions,
  version = '0.0.0',
): JsonObject {
  const idempotencyKey = {
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
  const scenarioHeader = {
    name: 'X-Sandbox-Scenario',
    in: 'header',
    required: false,
    description:
      'Sandbox only: `status=<400-599>`, `delay_ms=<0-' +
      MAX_DELAY_MS +
      '>` or `network_error`, joined with `;`, for this request alone, once the credential is accepted. `status=N` answers N with `code: simulated_failure` (listed under each status of this operation, `default` for the others); a simulated 401 or 403 carries `WWW-Authenticate` as a real one does, a 429 or 503 `Retry-After`.',
    schema: { type: 'string' },
  }
  const common = (names: (keyof typeof HEADERS)[] = []) => headerRefs(names)
  const operationPaths: Record<string, Record<string, JsonObject>> = {}
  for (const spec of OPERATIONS) {
    const { document } = spec
    const { success } = document
    const operation = {
      tags: [document.tag.name],
      summary: document.summary,
      operationId: spec.operation,
      description: document.description(options, assumption),
      parameters: [idempotencyKey, scenarioHeader],
      // The body is a named component (the input shape: fields with a
      // default stay optional), so generated clients get a type by its name.
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: ref(document.requestName),
            example: document.example(options),
          },
        },
      },
      responses: {
        [success.status]: {
          description: success.description,
          headers: {
            ...common(['IdempotentReplayed', 'RateLimit', 'RateLimitPolicy']),
            ...success.headers,
          },
          content: { 'application/json': { schema: ref(success.name) } },
        },
        ...operationErrors(document.errors, spec.replays),
      },
    }
    ;(operationPaths[spec.path] ??= {})[spec.method.toLowerCase()] = operation
  }
  // @note The rules that span fields, stated so that the document refuses
  // what the server refuses: a scenario must do something, and a latency
  // range must not run backwards (JSON Schema cannot compare two fields, so
  // that one is said in words).
  const scenarioBody = {
    ...jsonSchema(ScenarioBodySchema, 'input'),
    description:
      'At least one effect: a `status`, a `delay_ms` or `network_error: true`.',
    anyOf: [
      { required: ['status'] },
      { required: ['delay_ms'] },
      {
        required: ['network_error'],
        properties: { network_error: { const: true } },
      },
    ],
  }
  const latencyBody = {
    ...jsonSchema(LatencyBodySchema, 'input'),
    description:
      '`min_ms` must not exceed `max_ms`; a range that runs backwards is `422 validation_failed`.',
  }

  const surface = (
    summary: keyof typeof SURFACE_DESCRIPTIONS,
    responses: JsonObject,
    body?: JsonObject,
  ) => ({
    tags: ['Sandbox'],
    summary,
    description: SURFACE_DESCRIPTIONS[summary],
    operationId: SURFACE_OPERATION_IDS[summary],
    security: options.adminToken === undefined ? [] : [{ adminToken: [] }],
    ...(body && {
      requestBody: {
        required: false,
        content: { 'application/json': { schema: body } },
      },
    }),
    responses: {
      ...responses,
      ...(options.adminToken !== undefined && {
        '401': problemResponse(
          ['missing_credentials', 'invalid_credentials'],
          ['WWWAuthenticate'],
        ),
      }),
      '400': problemResponse(['invalid_json']),
      // The standalone server's edge (issue 14): foreign origins, rebinding.
      '403': problemResponse(['forbidden_origin']),
      '421': problemResponse(['host_not_allowed']),
      '422': problemResponse(['validation_failed']),
    },
  })
  const LIMIT_REACHED = { '409': problemResponse(['limit_reached']) }
  const withResponses = (
    operation: ReturnType<typeof surface>,
    responses: JsonObject,
  ) => ({
    ...operation,
    responses: { ...operation.responses, ...responses },
  })
  const restoreSurface = (...args: Parameters<typeof surface>) => {
    const operation = surface(...args)
    return {
      ...operation,
      responses: {
        ...operation.responses,
        '404': problemResponse(['not_found']),
      },
    }
  }
  const noContent = { '204': { description: 'Done.', headers: common() } }
  // The account-scoped controls: the Bearer credential is one of the
  // account's API keys, never the admin token.
  const accountSurface = (
    summary: keyof typeof SURFACE_DESCRIPTIONS,
    responses: JsonObject,
    { body, extra }: { body?: JsonObject; extra?: JsonObject } = {},
  ) => {
    const operation = surface(summary, responses, body)
    return {
      ...operation,
      security: [{ bearerAuth: [] }],
      responses: {
        ...operation.responses,
        '401': problemResponse(
          ['missing_credentials', 'invalid_credentials'],
          ['WWWAuthenticate'],
        ),
        '403': problemResponse(
          ['insufficient_scope', 'forbidden_origin'],
          ['WWWAuthenticate'],
        ),
        ...extra,
      },
    }
  }
  const scenarioList = okJson('Queued scenarios.', {
    type: 'object',
    properties: { scenarios: { type: 'array', items: ref('SandboxScenario') } },
    required: ['scenarios'],
  })
  const journalList = (description: string) =>
    okJson(description, {
      type: 'object',
      properties: {
        requests: { type: 'array', items: ref('SandboxJournalEntry') },
      },
      required: ['requests'],
    })

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
        OPERATIONS.map(({ document: { tag } }) => [tag.name, tag]),
      ).values(),
      {
        name: 'Sandbox',
        description:
          "The sandbox's own surface: inspection, reset, keys, the journal, the clock, scenarios and the assumption ledger. Not part of the imitated API.",
      },
    ],
    paths: {
      ...operationPaths,
      '/__sandbox/health': {
        get: {
          ...surface('Health check', {
            ...okJson('Up.', ref('SandboxHealth')),
            '503': {
              description:
                'Degraded: the last write of the data file failed (a server with `--data-file` only); back to 200 once a write succeeds.',
              headers: common(['RetryAfter']),
              content: {
                'application/json': { schema: ref('SandboxHealthDegraded') },
              },
            },
          }),
          security: [],
        },
      },
      '/__sandbox/state': {
        get: {
          ...surface('Inspect state', {
            '200': {
              description: 'Accounts, customers and tokens; secrets masked.',
              headers: common(['ETag', 'CacheControlNoCache']),
              content: { 'application/json': { schema: ref('SandboxState') } },
            },
            '304': {
              description:
                'Unchanged since the `ETag` sent in `If-None-Match`; no body.',
              headers: common(['ETag', 'CacheControlNoCache']),
            },
          }),
          parameters: [
            {
              name: 'If-None-Match',
              in: 'header',
              required: false,
              description:
                'An `ETag` of this answer: `304` while the state is unchanged.',
              schema: { type: 'string' },
            },
          ],
        },
      },
      '/__sandbox/reset': {
        post: surface(
          'Reset to the seed',
          okJson(
            'Back to the fixtures and the seeded data.',
            ref('SandboxReset'),
          ),
          jsonSchema(ResetBodySchema, 'input'),
        ),
      },
      '/__sandbox/api-keys': {
        post: withResponses(
          surface(
            'Mint an API key',
            okJson(
              'A new account and its key (shown this once).',
              ref('SandboxCreatedApiKey'),
              201,
              ['CacheControl'],
            ),
            jsonSchema(ApiKeyBodySchema, 'input'),
          ),
          LIMIT_REACHED,
        ),
      },
      '/__sandbox/requests': {
        get: {
          ...surface(
            'Read the journal',
            okJson('Requests, newest first.', {
              type: 'object',
              properties: {
                requests: { type: 'array', items: ref('SandboxJournalEntry') },
              },
              required: ['requests'],
            }),
          ),
          parameters: [
            {
              name: 'limit',
              in: 'query',
              required: false,
              schema: { type: 'integer', minimum: 0 },
            },
          ],
        },
        delete: surface('Clear the journal', noContent),
      },
      '/__sandbox/clock': {
        get: surface(
          'Read the clock',
          okJson('The sandbox time.', ref('SandboxClock')),
        ),
        post: withResponses(
          surface(
            'Set or advance the clock',
            okJson('The new sandbox time.', ref('SandboxClock')),
            jsonSchema(ClockBodySchema, 'input'),
          ),
          {
            '422': problemResponse(['validation_failed', 'out_of_range']),
          },
        ),
      },
      '/__sandbox/scenarios': {
        get: surface(
          'List scenarios',
          okJson('Queued scenarios.', {
            type: 'object',
            properties: {
              scenarios: { type: 'array', items: ref('SandboxScenario') },
            },
            required: ['scenarios'],
          }),
        ),
        post: withResponses(
          surface(
            'Queue a scenario',
            okJson('The queued scenario.', ref('SandboxScenario'), 201),
            scenarioBody,
          ),
          LIMIT_REACHED,
        ),
        delete: surface('Clear scenarios', noContent),
      },
      '/__sandbox/snapshots': {
        get: surface(
          'List snapshots',
          okJson('The snapshots taken, oldest first.', {
            type: 'object',
            properties: {
              snapshots: { type: 'array', items: ref('SandboxSnapshot') },
            },
            required: ['snapshots'],
          }),
        ),
        post: withResponses(
          surface(
            'Take a snapshot',
            okJson(
              'The snapshot taken: data and clock.',
              ref('SandboxSnapshot'),
              201,
            ),
            jsonSchema(SnapshotBodySchema, 'input'),
          ),
          LIMIT_REACHED,
        ),
      },
      '/__sandbox/snapshots/restore': {
        post: {
          ...restoreSurface(
            'Restore a snapshot',
            okJson(
              'The data and clock are back; the journal and scenarios stay.',
              ref('SandboxRestored'),
            ),
            jsonSchema(SnapshotBodySchema, 'input'),
          ),
        },
      },
      '/__sandbox/latency': {
        get: surface(
          'Read the global latency',
          okJson(
            'The latency range of every API call (0–0 for none).',
            ref('SandboxLatency'),
          ),
        ),
        post: surface(
          'Set the global latency',
          okJson('The new latency range.', ref('SandboxLatency')),
          latencyBody,
        ),
        delete: surface(
          'Remove the global latency',
          okJson('No latency: 0–0.', ref('SandboxLatency')),
        ),
      },
      '/__sandbox/export': {
        get: {
          ...surface(
            'Export the session',
            okJson(
              'Options, data, clock, journal and id positions, with every secret masked (`"secrets": "masked"`) unless `?secrets=include`: start a sandbox from a full export with createSandbox({ from }) or --from.',
              ref('SandboxSession'),
              200,
              ['CacheControl'],
            ),
          ),
          parameters: [
            {
              name: 'secrets',
              in: 'query',
              required: false,
              description:
                '`include` for the full secrets (on the standalone server: from this machine or with the admin token, never for a foreign Origin); `mask` (the default) masks them.',
              schema: { type: 'string', enum: ['include', 'mask'] },
            },
          ],
        },
      },
      '/__sandbox/assumptions': {
        get: surface(
          'Read the assumption ledger',
          okJson('Every "not shown" item of the interface.', {
            type: 'object',
            properties: {
              assumptions: { type: 'array', items: ref('SandboxAssumption') },
            },
            required: ['assumptions'],
          }),
        ),
      },
      '/__sandbox/account/clock': {
        get: accountSurface(
          'Read the account clock',
          okJson("The account's time.", ref('SandboxAccountClock')),
        ),
        post: accountSurface(
          'Set or advance the account clock',
          okJson("The account's new time.", ref('SandboxAccountClock')),
          {
            body: jsonSchema(ClockBodySchema, 'input'),
            extra: {
              '422': problemResponse(['validation_failed', 'out_of_range']),
            },
          },
        ),
        delete: accountSurface(
          'Drop the account clock',
          okJson("The account's time.", ref('SandboxAccountClock')),
        ),
      },
      '/__sandbox/account/scenarios': {
        get: accountSurface('List the account scenarios', scenarioList),
        post: accountSurface(
          'Queue an account scenario',
          okJson('The queued scenario.', ref('SandboxScenario'), 201),
          {
            body: scenarioBody,
            extra: LIMIT_REACHED,
          },
        ),
        delete: accountSurface('Clear the account scenarios', noContent),
      },
      '/__sandbox/account/requests': {
        get: {
          ...accountSurface(
            'Read the account journal',
            journalList("The account's requests, newest first."),
          ),
          parameters: [
            {
              name: 'limit',
              in: 'query',
              required: false,
              schema: { type: 'integer', minimum: 0 },
            },
          ],
        },
        delete: accountSurface('Clear the account journal', noContent),
      },
      '/openapi.json': {
        get: {
          ...surface(
            'Read this document',
            okJson('This OpenAPI document.', { type: 'object' }),
          ),
          security: [],
        },
      },
    },
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
          OPERATIONS.map((spec) => [
            spec.document.requestName,
            jsonSchema(spec.body(options), 'input'),
          ]),
        ),
        ...Object.fromEntries(
          OPERATIONS.map(({ document: { success } }) => [
            success.name,
            {
              ...jsonSchema(success.schema(options)),
              example: success.example(options),
            },
          ]),
        ),
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
