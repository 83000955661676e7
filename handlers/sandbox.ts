// The sandbox's own surface, /__sandbox/*: health, state, clock, scenarios, keys, snapshots.
import type { Route, SandboxContext } from '../src/request/context.ts'
import { z } from 'zod'
import {
  SandboxError,
  validationError,
  type FieldError,
} from '../src/request/errors.ts'
import { json } from '../src/request/pipeline.ts'
import { STORAGE_RETRY_AFTER_SECONDS } from '../src/request/errors.ts'
import type { SandboxCore, SnapshotInfo } from '../src/sandbox.ts'
import {
  ApiKeyBodySchema,
  ClockBodySchema,
  ResetBodySchema,
  LatencyBodySchema,
  ScenarioBodySchema,
  SnapshotBodySchema,
} from '../src/model/schemas.ts'
import { VERSION } from '../src/version.ts'
import { MAX_DELAY_MS } from '../src/defaults.ts'
import type { SandboxClock } from '../src/model/clock.ts'
import {
  hasEffect,
  type Scenario,
  type Scenarios,
} from '../src/request/scenarios.ts'
import { maskSession } from '../src/model/secrets.ts'
import {
  bindSurfaceRoute,
  listOf,
  schemaRef,
  type SandboxCall,
  type SurfaceDocument,
  type SurfaceParameter,
  type SurfaceRoute,
} from '../src/request/sandbox-api.ts'
import { clip } from '../src/request/validation.ts'
import { LimitReachedError } from '../src/request/limits.ts'
import { createStateTag, noneMatchHits } from '../src/request/state-tag.ts'
import { storedOnly } from '../src/request/stored-records.ts'
import type { SandboxData, SandboxSession } from '../src/model/schemas.ts'
import type { OperationDefinition } from '../src/request/define-operation.ts'
import type { DocumentedTable } from './openapi.ts'

type SandboxResolver = (
  call: SandboxCall,
  env: SurfaceEnv,
) => Response | Promise<Response>

const AnyObject = z.record(z.string(), z.unknown())
const IsoDateTime = z.iso.datetime({ offset: true })
const CLOCK_SHAPES =
  'send {"advance_seconds": <whole seconds, negative to go back>} or {"now": "<ISO-8601 date-time such as 2026-01-01T00:00:00Z>"}'

/**
 * Reads the body of `POST /__sandbox/clock` (`ClockBodySchema` in the
 * document), with messages that name the field at fault and both accepted
 * shapes: a union's own issues name neither.
 */
function readClockBody(
  raw: Record<string, unknown>,
): { advance_seconds: number } | { now: string } {
  const errors: FieldError[] = []
  for (const key of Object.keys(raw)) {
    if (key !== 'advance_seconds' && key !== 'now') {
      errors.push({
        field: clip(key),
        code: 'unknown_field',
        message: `${clip(key)} is not a field of this request; ${CLOCK_SHAPES}`,
      })
    }
  }
  const { advance_seconds: seconds, now } = raw
  if (seconds !== undefined && now !== undefined) {
    errors.push({
      field: 'now',
      code: 'invalid',
      message: `advance_seconds and now cannot be sent together; ${CLOCK_SHAPES}`,
    })
  } else if (seconds === undefined && now === undefined) {
    if (errors.length === 0) {
      errors.push({
        field: 'advance_seconds',
        code: 'required',
        message: `The body names no move; ${CLOCK_SHAPES}`,
      })
    }
  } else if (seconds !== undefined && !Number.isInteger(seconds)) {
    errors.push({
      field: 'advance_seconds',
      code: typeof seconds === 'number' ? 'not_integer' : 'invalid_type',
      message: `advance_seconds must be a whole number of seconds (negative to go back), not ${clip(JSON.stringify(seconds) ?? String(seconds))}`,
    })
  } else if (now !== undefined && !IsoDateTime.safeParse(now).success) {
    errors.push({
      field: 'now',
      code: typeof now === 'string' ? 'invalid_format' : 'invalid_type',
      message: `now must be an ISO-8601 date-time with a time zone, such as "2026-01-01T00:00:00Z", not ${clip(JSON.stringify(now) ?? String(now))}`,
    })
  }
  if (errors.length > 0) throw validationError(errors)
  return seconds !== undefined
    ? { advance_seconds: seconds as number }
    : { now: now as string }
}

/**
 * Moves `clock` as a `POST …/clock` body asks; a move out of range is
 * `422 out_of_range`.
 *
 * @example
 * moveClock(sandbox.clock, { advance_seconds: 3600 })
 */
export function moveClock(
  clock: SandboxClock,
  raw: Record<string, unknown>,
): void {
  const body = readClockBody(raw)
  try {
    if ('advance_seconds' in body) clock.advance(body.advance_seconds * 1000)
    else clock.set(body.now)
  } catch (error) {
    const message = (error as Error).message.replace(
      /^Failed to move the sandbox clock: /,
      'The clock cannot move there: ',
    )
    throw new SandboxError('out_of_range', message, {
      errors: [
        {
          field: 'advance_seconds' in body ? 'advance_seconds' : 'now',
          code: 'out_of_range',
          message,
        },
      ],
    })
  }
}

/**
 * Queues what a `POST …/scenarios` body asks on `queue`; a bad effect is a
 * `422`, a full queue `409 limit_reached`.
 *
 * @example
 * queueScenario(sandbox.scenarios, { operation: 'createToken', status: 503 })
 */
export function queueScenario(
  queue: Pick<Scenarios, 'next'>,
  body: z.infer<typeof ScenarioBodySchema>,
): Scenario {
  // @note Checked here, not by queue.next(), whose message names the
  // JavaScript options (delayMs, networkError) that no HTTP body takes.
  const effect = {
    ...(body.status !== undefined && { status: body.status }),
    ...(body.delay_ms !== undefined && { delayMs: body.delay_ms }),
    ...(body.network_error && { networkError: true }),
  }
  if (!hasEffect(effect)) {
    throw validationError([
      {
        field: 'status',
        pointer: '/status',
        code: 'required',
        message: `A scenario needs an effect: send "status" (400 to 599), "delay_ms" (0 to ${MAX_DELAY_MS}) or "network_error": true`,
      },
    ])
  }
  try {
    return queue.next(body.operation, {
      ...effect,
      ...(body.times !== undefined && { times: body.times }),
    })
  } catch (error) {
    if (error instanceof LimitReachedError) throw error
    throw validationError([
      {
        field: 'status',
        code: 'invalid',
        message: (error as Error).message,
      },
    ])
  }
}

/** The largest `?limit=N` of a journal read: seven digits. */
const LIMIT_MAX = 9_999_999

/**
 * Reads the `?limit=N` of a journal read; anything but a whole number from 0
 * to `LIMIT_MAX` is a `422`.
 *
 * @example
 * sandbox.journal.list(readLimit(new URL('http://x/__sandbox/requests?limit=5')))
 */
export function readLimit(url: URL): { limit?: number } {
  const raw = url.searchParams.get('limit')
  if (raw !== null && !/^\d{1,7}$/.test(raw)) {
    throw validationError([
      {
        field: 'limit',
        code: /^\d+$/.test(raw) ? 'out_of_range' : 'invalid_type',
        message: `limit must be a whole number from 0 to ${LIMIT_MAX}, not ${JSON.stringify(clip(raw, 40))}`,
      },
    ])
  }
  return raw === null ? {} : { limit: Number(raw) }
}

/**
 * The body of `POST …/scenarios` in the document, with the rule that spans
 * its fields: a scenario must do something (`SCENARIO_BODY_RULE` in words).
 */
export const SCENARIO_BODY: NonNullable<SurfaceDocument['body']> = {
  schema: ScenarioBodySchema,
  anyOf: [
    { required: ['status'] },
    { required: ['delay_ms'] },
    {
      required: ['network_error'],
      properties: { network_error: { const: true } },
    },
  ],
}

/** The header of an answer that carries a full secret. */
const NO_STORE = { 'cache-control': 'no-store' }

/** A scenario as /__sandbox/scenarios answers it. */
export const scenarioView = (s: Scenario) => ({
  id: s.id,
  operation: s.operation,
  status: s.status ?? null,
  delay_ms: s.delayMs ?? null,
  network_error: s.networkError ?? false,
  remaining: s.remaining,
})

/** What the core gives the surface routes of one sandbox besides its context. */
export interface SurfaceParts {
  /** The surface routes to bind (`SURFACE_ROUTES`). */
  routes: readonly SurfaceRoute<SurfaceEnv>[]
  /** The sandbox's operations, which its document lists before the routes. */
  operations: readonly OperationDefinition<string>[]
  /** An export without its record lists (see `SurfaceEnv`). */
  exportWithoutRecords: () => SandboxSession
  /** `reset` and `restore` that do not store (see `SurfaceEnv`). */
  unstored: Pick<SandboxCore, 'reset' | 'restore'>
}

/** What a surface route reaches of one sandbox, made once per sandbox. */
export interface SurfaceEnv {
  ctx: SandboxContext
  sandbox: SandboxCore
  /**
   * Builds a large answer in its turn, and none for a client that left
   * meanwhile; `streamJson` and the shared parts are there once it runs.
   */
  paced: (
    call: SandboxCall,
    build: () => Response | Promise<Response>,
  ) => Promise<Response>
  /** `streamJson` (json-stream.ts) on this sandbox's pacer, inside `paced`. */
  streamJson: (
    status: number,
    body: unknown,
    headers?: Record<string, string>,
  ) => Response
  stateTag: () => string
  /**
   * The state without its time, one copy per version (its `ETag`): of the
   * records stored, once the writes under way when it was read are done.
   */
  sharedState: (tag: string) => Promise<object>
  /** The journal's entries (the newest `limit`), one copy per version. */
  journalNow: (limit?: number) => unknown
  /**
   * The export's record lists, masked and not, one copy per data version:
   * of the records stored, as in `sharedState`.
   */
  sharedRecords: () => Promise<{ include: object; mask: object }>
  /** An export without its record lists, which `sharedRecords` gives. */
  exportWithoutRecords: () => SandboxSession
  /**
   * The JavaScript API's `reset` and `restore`, which store what they
   * changed themselves, without that: a surface call stores what it
   * changed once it is done (`runSandboxCall`).
   */
  unstored: Pick<SandboxCore, 'reset' | 'restore'>
  latencyNow: () => Response
  clockNow: () => Response
  /** The route table the document is folded from: this sandbox's operations and surface routes. */
  table: DocumentedTable
  /** The document as served, built on the first request for it. */
  document?: string
}

/**
 * One value per version: `build` runs when the version (its arguments,
 * compared one by one) differs from the last call's, and its value is kept
 * until then.
 *
 * @example
 * const customers = lastByVersion(() => shareJson(sandbox.customers.list()))
 * customers(ctx.db, ctx.revision)
 */
function lastByVersion<V extends unknown[], T>(
  build: (...version: V) => T,
): (...version: V) => T {
  let last: { version: V; value: T } | undefined
  return (...version) => {
    if (
      last === undefined ||
      last.version.length !== version.length ||
      last.version.some((item, i) => item !== version[i])
    )
      last = { version, value: build(...version) }
    return last.value
  }
}

/** An export's record lists, each one shared part. */
const shareRecords = (
  shareJson: JsonStream['shareJson'],
  data: Pick<SandboxData, 'accounts' | 'api_keys' | 'customers' | 'tokens'>,
) => ({
  accounts: shareJson(data.accounts),
  api_keys: shareJson(data.api_keys),
  customers: shareJson(data.customers),
  tokens: shareJson(data.tokens),
})

type JsonStream = typeof import('../src/request/json-stream.ts')

/** A session with `records` in place of its record lists, where they stood. */
const withRecords = <T extends { data: object }>(
  session: T,
  records: object,
) => ({ ...session, data: { ...session.data, ...records } })

function createSurfaceEnv(
  ctx: SandboxContext,
  sandbox: SandboxCore,
  { exportWithoutRecords, unstored, ...table }: SurfaceParts,
): SurfaceEnv {
  // @note The answers that grow with the data (megabytes at thousands of
  // customers) are written in slices that share the event loop, not built
  // whole: the health check stays answered while many clients read them.
  // Their writer is loaded with the first (`paced`): a page that asks for
  // none carries none of it.
  let slices: JsonStream | undefined
  let pacer: ReturnType<JsonStream['createPacer']> | undefined
  const shareJson = (value: unknown) => slices!.shareJson(value)
  // @note Many clients reading one large answer at once share one copy of
  // what grows with the data, and one serialisation of it, per version:
  // built for each, 500 copies of an export filled the heap and its
  // collections held the event loop for seconds. The journal has versions
  // of its own; what changes with no write (the time, the clocks, the id
  // positions) is read for each answer.
  // @note A durable store may still refuse the write of a record in memory
  // (storedOnly): read now, each copy waits for the writes under way, so
  // that no answer shows a record no call was answered 201 for.
  const sharedState = lastByVersion(async (_tag: string) => {
    const { accounts, customers, tokens, ...rest } = await storedOnly(
      ctx,
      sandbox.state(),
    )
    return {
      ...rest,
      accounts: shareJson(accounts),
      customers: shareJson(customers),
      tokens: shareJson(tokens),
    }
  })
  // @note An entry is not changed once recorded: the newest one and the
  // count tell a journal's version.
  const sharedJournal = lastByVersion(
    (_newest: unknown, _size: number, limit: number | undefined) =>
      shareJson(sandbox.journal.list(limit === undefined ? {} : { limit })),
  )
  const sharedRecords = lastByVersion(
    async (_db: unknown, _revision: number) => {
      const exported = sandbox.export()
      const session = {
        ...exported,
        data: await storedOnly(ctx, exported.data),
      }
      return {
        include: shareRecords(shareJson, session.data),
        mask: shareRecords(shareJson, maskSession(session).data),
      }
    },
  )
  return {
    ctx,
    sandbox,
    stateTag: createStateTag(ctx),
    sharedState,
    journalNow: (limit) =>
      sharedJournal(sandbox.journal.last(), sandbox.journal.size, limit),
    sharedRecords: () => sharedRecords(ctx.db, ctx.revision),
    exportWithoutRecords,
    unstored,
    table,
    async paced(call, build) {
      slices ??= await import('../src/request/json-stream.ts')
      pacer ??= slices.createPacer()
      await pacer.turn()
      // @note A reset (or a restore) begun while this read waited for its
      // store or its turn is still refilling the data: read the new data
      // once it is in, never half-filled.
      while (!ctx.seeded) await ctx.ready
      // @note A network error is the one answer nobody waits for: the server
      // drops the connection, which is gone already.
      return call.request.signal.aborted ? Response.error() : build()
    },
    streamJson: (...args) => slices!.streamJson(pacer!, ...args),
    latencyNow() {
      const latency = sandbox.scenarios.latency()
      return json(
        200,
        latency
          ? { min_ms: latency.min, max_ms: latency.max }
          : { min_ms: 0, max_ms: 0 },
      )
    },
    clockNow: () =>
      json(200, {
        now: sandbox.clock.now().toISOString(),
        frozen: sandbox.clock.frozen,
      }),
  }
}

const route = (
  method: Route['method'],
  path: string,
  document: SurfaceDocument,
  resolve: SandboxResolver,
  guard: SurfaceRoute['guard'] = 'admin',
): SurfaceRoute<SurfaceEnv> => ({ method, path, guard, document, resolve })

const noContent = { 204: {} }

/**
 * The snapshots kept: a fleet's, as its store keeps them (another replica
 * may have taken one), or this sandbox's.
 */
const snapshotsNow = async ({
  ctx,
  sandbox,
}: SurfaceEnv): Promise<SnapshotInfo[]> =>
  ctx.storage?.snapshots
    ? (await import('../src/request/fleet-snapshots.ts')).listSnapshots(
        ctx.storage,
      )
    : sandbox.snapshots()

/** `?limit=N` of a journal read (`readLimit`). */
export const LIMIT_PARAMETER: SurfaceParameter = {
  name: 'limit',
  in: 'query',
  required: false,
  schema: { type: 'integer', minimum: 0, maximum: LIMIT_MAX },
}

/**
 * The sandbox's own HTTP API under `/__sandbox/`, each call with its entry
 * in the OpenAPI document (its words in `sandbox.docs.ts`): inspection, reset, keys, the journal, the clock,
 * scenarios and the assumption ledger. Each route calls the same
 * JavaScript API a test would.
 *
 * @example
 * SANDBOX_ROUTES.map((route) => `${route.method} ${route.path}`)
 */
export const SANDBOX_ROUTES: readonly SurfaceRoute<SurfaceEnv>[] = [
  route(
    'GET',
    'health',
    {
      operationId: 'getHealth',
      answers: {
        200: { schema: schemaRef('SandboxHealth') },
        503: {
          headers: ['RetryAfter'],
          schema: schemaRef('SandboxHealthDegraded'),
        },
      },
    },
    (_, { ctx }) => {
      // @note A data file that cannot be written makes every write a 503.
      const fault = ctx.storage?.fault()
      return fault
        ? json(
            503,
            { status: 'degraded', storage: fault },
            { 'retry-after': String(STORAGE_RETRY_AFTER_SECONDS) },
          )
        : json(200, { status: 'ok' })
    },
    'public',
  ),
  route(
    'GET',
    'state',
    {
      operationId: 'getState',
      answers: {
        200: {
          headers: ['ETag', 'CacheControlNoCache'],
          schema: schemaRef('SandboxState'),
        },
        304: { headers: ['ETag', 'CacheControlNoCache'] },
      },
      parameters: [
        {
          name: 'If-None-Match',
          in: 'header',
          required: false,
          schema: { type: 'string' },
        },
      ],
    },
    (call, { sandbox, paced, streamJson, stateTag, sharedState }) =>
      paced(call, async () => {
        // @note A client that polls asks with the tag it has; an unchanged
        // state costs it a 304 instead of megabytes.
        const headers = { etag: stateTag(), 'cache-control': 'no-cache' }
        if (
          noneMatchHits(call.request.headers.get('if-none-match'), headers.etag)
        )
          return new Response(null, { status: 304, headers })
        const state = await sharedState(headers.etag)
        return streamJson(
          200,
          { ...state, now: sandbox.clock.now().toISOString() },
          headers,
        )
      }),
  ),
  route(
    'POST',
    'reset',
    {
      operationId: 'reset',
      answers: { 200: { schema: schemaRef('SandboxReset') } },
      body: { schema: ResetBodySchema },
    },
    async (call, { sandbox, unstored }) => {
      const { seed } = await call.body(ResetBodySchema)
      await unstored.reset(seed)
      return json(200, {
        status: 'reset',
        seed: sandbox.seed,
        now: sandbox.clock.now().toISOString(),
      })
    },
  ),
  route(
    'POST',
    'api-keys',
    {
      operationId: 'createApiKey',
      answers: {
        201: {
          headers: ['CacheControl'],
          schema: schemaRef('SandboxCreatedApiKey'),
        },
      },
      body: { schema: ApiKeyBodySchema },
      throws: ['limit_reached'],
    },
    async (call, { sandbox }) => {
      const body = await call.body(ApiKeyBodySchema)
      const created = await sandbox.createApiKey(
        body.account_name === undefined
          ? {}
          : { accountName: body.account_name },
      )
      return json(
        201,
        {
          api_key: created.apiKey,
          account_id: created.accountId,
        },
        // RFC 6749, section 5.1: an answer with a secret is never cached.
        NO_STORE,
      )
    },
  ),
  route(
    'GET',
    'requests',
    {
      operationId: 'listRequests',
      answers: { 200: { schema: listOf('requests', 'SandboxJournalEntry') } },
      parameters: [LIMIT_PARAMETER],
    },
    async (call, { ctx, paced, streamJson, journalNow }) => {
      const limit = readLimit(call.url)
      const store = ctx.storage
      // A fleet's journal is read from its store, bounded by journalLimit.
      if (store?.journal) {
        const { listFleetJournal } =
          await import('../src/request/fleet-journal.ts')
        return json(200, { requests: await listFleetJournal(store, limit) })
      }
      return paced(call, () =>
        streamJson(200, { requests: journalNow(limit.limit) }),
      )
    },
  ),
  route(
    'DELETE',
    'requests',
    { operationId: 'clearRequests', answers: noContent },
    async (_, { ctx, sandbox }) => {
      sandbox.journal.clear()
      const store = ctx.storage
      if (store?.journal)
        await (
          await import('../src/request/fleet-journal.ts')
        ).clearFleetJournal(store)
      return new Response(null, { status: 204 })
    },
  ),
  route(
    'GET',
    'clock',
    {
      operationId: 'getClock',
      answers: { 200: { schema: schemaRef('SandboxClock') } },
    },
    (_, { clockNow }) => clockNow(),
  ),
  route(
    'POST',
    'clock',
    {
      operationId: 'setClock',
      answers: { 200: { schema: schemaRef('SandboxClock') } },
      body: { schema: ClockBodySchema },
      // readClockBody's own 422s, then moveClock's.
      throws: ['validation_failed', 'out_of_range'],
    },
    async (call, { sandbox, clockNow }) => {
      moveClock(sandbox.clock, await call.body(AnyObject))
      return clockNow()
    },
  ),
  route(
    'GET',
    'scenarios',
    {
      operationId: 'listScenarios',
      answers: { 200: { schema: listOf('scenarios', 'SandboxScenario') } },
    },
    (_, { sandbox }) =>
      json(200, { scenarios: sandbox.scenarios.list().map(scenarioView) }),
  ),
  route(
    'POST',
    'scenarios',
    {
      operationId: 'queueScenario',
      answers: { 201: { schema: schemaRef('SandboxScenario') } },
      body: SCENARIO_BODY,
      throws: ['limit_reached'],
    },
    async (call, { sandbox }) => {
      const body = await call.body(ScenarioBodySchema)
      return json(201, scenarioView(queueScenario(sandbox.scenarios, body)))
    },
  ),
  route(
    'DELETE',
    'scenarios',
    { operationId: 'clearScenarios', answers: noContent },
    (_, { sandbox }) => {
      sandbox.scenarios.clear()
      return new Response(null, { status: 204 })
    },
  ),
  route(
    'GET',
    'snapshots',
    {
      operationId: 'listSnapshots',
      answers: { 200: { schema: listOf('snapshots', 'SandboxSnapshot') } },
    },
    async (_, env) => json(200, { snapshots: await snapshotsNow(env) }),
  ),
  route(
    'POST',
    'snapshots',
    {
      operationId: 'createSnapshot',
      answers: { 201: { schema: schemaRef('SandboxSnapshot') } },
      body: { schema: SnapshotBodySchema },
      throws: ['limit_reached'],
    },
    async (call, { sandbox }) => {
      const { name } = await call.body(SnapshotBodySchema)
      return json(201, await sandbox.snapshot(name))
    },
  ),
  route(
    'POST',
    'snapshots/restore',
    {
      operationId: 'restoreSnapshot',
      answers: { 200: { schema: schemaRef('SandboxRestored') } },
      body: { schema: SnapshotBodySchema },
      throws: ['not_found'],
    },
    async (call, env) => {
      const { sandbox, unstored } = env
      const { name } = await call.body(SnapshotBodySchema)
      if (!(await snapshotsNow(env)).some((s) => s.name === name)) {
        throw new SandboxError(
          'not_found',
          `There is no snapshot named "${name}"; take one with POST /__sandbox/snapshots.`,
        )
      }
      await unstored.restore(name)
      return json(200, {
        restored: name,
        now: sandbox.clock.now().toISOString(),
      })
    },
  ),
  route(
    'GET',
    'latency',
    {
      operationId: 'getLatency',
      answers: { 200: { schema: schemaRef('SandboxLatency') } },
    },
    (_, { latencyNow }) => latencyNow(),
  ),
  route(
    'POST',
    'latency',
    {
      operationId: 'setLatency',
      answers: { 200: { schema: schemaRef('SandboxLatency') } },
      // min_ms ≤ max_ms, which JSON Schema cannot say, is in sandbox.docs.ts.
      body: { schema: LatencyBodySchema },
    },
    async (call, { sandbox, latencyNow }) => {
      const { min_ms, max_ms } = await call.body(LatencyBodySchema)
      if (min_ms > max_ms) {
        throw validationError([
          {
            field: 'min_ms',
            pointer: '/min_ms',
            code: 'out_of_range',
            message: `min_ms (${min_ms}) must not be above max_ms (${max_ms})`,
          },
        ])
      }
      try {
        sandbox.scenarios.latency({ min: min_ms, max: max_ms })
      } catch (error) {
        throw validationError([
          {
            field: 'min_ms',
            code: 'out_of_range',
            message: (error as Error).message,
          },
        ])
      }
      return latencyNow()
    },
  ),
  route(
    'DELETE',
    'latency',
    {
      operationId: 'clearLatency',
      answers: { 200: { schema: schemaRef('SandboxLatency') } },
    },
    (_, { sandbox, latencyNow }) => {
      sandbox.scenarios.latency(false)
      return latencyNow()
    },
  ),
  route(
    'GET',
    'export',
    {
      operationId: 'exportSession',
      answers: {
        200: {
          headers: ['CacheControl'],
          schema: schemaRef('SandboxSession'),
        },
      },
      parameters: [
        {
          name: 'secrets',
          in: 'query',
          required: false,
          schema: { type: 'string', enum: ['include', 'mask'] },
        },
      ],
    },
    (
      call,
      { paced, streamJson, journalNow, sharedRecords, exportWithoutRecords },
    ) => {
      const secrets = call.url.searchParams.get('secrets')
      if (secrets !== null && secrets !== 'include' && secrets !== 'mask') {
        throw validationError([
          {
            field: 'secrets',
            code: 'invalid_value',
            message: 'secrets must be "include" or "mask"',
          },
        ])
      }
      return paced(call, async () => {
        const session = { ...exportWithoutRecords(), journal: journalNow() }
        const records = await sharedRecords()
        // @note Masked unless asked: an export shared or leaked gives no key away.
        return secrets === 'include'
          ? streamJson(200, withRecords(session, records.include), NO_STORE)
          : streamJson(200, withRecords(maskSession(session), records.mask))
      })
    },
  ),
  route(
    'GET',
    'assumptions',
    {
      operationId: 'listAssumptions',
      answers: {
        200: { schema: listOf('assumptions', 'SandboxAssumption') },
      },
    },
    (_, { sandbox }) => json(200, { assumptions: sandbox.assumptions() }),
  ),
]

/** `GET /openapi.json`: the document, for whoever calls it (no admin token). */
export const DOCUMENT_ROUTE: SurfaceRoute<SurfaceEnv> = route(
  'GET',
  '/openapi.json',
  {
    operationId: 'getOpenApiDocument',
    answers: { 200: { schema: { type: 'object' } } },
  },
  async (_, env) => {
    // Loaded on the first call: a page that never asks for the document
    // does not download its generator nor its words (the `*.docs.ts`).
    const { documentRouteTable } = await import('./openapi.ts')
    env.document ??= JSON.stringify(
      documentRouteTable(env.ctx.options, VERSION, env.table),
    )
    return new Response(env.document, {
      headers: { 'content-type': 'application/json' },
    })
  },
  'public',
)

/**
 * Binds the surface routes (`/__sandbox/*` and `/openapi.json`) to one
 * sandbox, in the order of the route table.
 *
 * @example
 * surfaceRoutes(ctx, sandbox, { routes: SURFACE_ROUTES, operations: OPERATIONS, exportWithoutRecords, unstored }).map((route) => `${route.method} ${route.path}`)
 */
export function surfaceRoutes(
  ctx: SandboxContext,
  sandbox: SandboxCore,
  parts: SurfaceParts,
): Route[] {
  const env = createSurfaceEnv(ctx, sandbox, parts)
  const { routes } = parts
  return routes.map((declared) => bindSurfaceRoute(ctx, declared, env))
}
