import {
  authenticate,
  readBearer,
  REALM,
  requireScope,
  type BearerResult,
  type Principal,
} from './auth.ts'
import type { RequestLike, SandboxContext } from './context.ts'
import {
  SandboxError,
  STATUS_TEXT,
  validationError,
  type ErrorCode,
} from './errors.ts'
import type { CreatedRecord } from './db.ts'
import type { JournalEntry, Operation } from './journal.ts'
import { LimitReachedError, limitHint, limitReached } from './limits.ts'
import { parseScenarioHeader, type ScenarioEffect } from './scenarios.ts'
import {
  checkContentType,
  clip,
  parseJsonObject,
  readBody,
  type BodyTypes,
} from './validation.ts'
import type { StoredResponse } from './idempotency.ts'
import { PERSONA_RATE_LIMIT, PERSONA_SLOW_MS } from './personas.ts'
import { sleep, hashString } from './_utils.ts'
import { isoTime, type SandboxClock } from './clock.ts'
import { reportUnexpected } from './report.ts'

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
  operation: Operation
  /** The scope a token needs; API keys have them all. */
  scope: string
  bodyTypes: BodyTypes
  /** Checks the caller may use this operation at all, before the body is read. */
  authorize?: (ctx: SandboxContext, principal: Principal) => void
  /**
   * Validates the body and does the work; throws SandboxError for 4xx.
   * Synchronous, so that no other request runs between its checks (ids,
   * emails) and its insert.
   */
  execute: (
    ctx: SandboxContext,
    principal: Principal,
    body: Record<string, unknown>,
    now: Date,
  ) => OperationResult
}

const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/

/** A JSON response with the sandbox's content type. */
export function json(
  status: number,
  body: unknown,
  headers?: Record<string, string>,
): Response {
  return new Response(JSON.stringify(body), {
    status,
    statusText: STATUS_TEXT[status] ?? '',
    headers: { 'content-type': 'application/json', ...headers },
  })
}

/**
 * Adds the adapter's headers (the server's CORS headers) to an answer that
 * was not built with them.
 *
 * @example
 * return addAdapterHeaders(ctx, request, await resolve(request, url))
 */
export function addAdapterHeaders(
  ctx: SandboxContext,
  request: RequestLike,
  response: Response,
): Response {
  if (!ctx.responseHeaders || response.status === 0) return response
  for (const [name, value] of ctx.responseHeaders(request)) {
    response.headers.set(name, value)
  }
  return response
}

/** Per-request bookkeeping shared by the operation and the plain API answers. */
interface Exchange {
  bearer: BearerResult
  requestId: string
  started: number
  at: Date
  entry: Pick<
    JournalEntry,
    'account_id' | 'credential' | 'scenario' | 'replayed' | 'code'
  >
  /** Headers the exchange adds to its answer (rate limiting), as pairs. */
  headers: [string, string][]
}

function beginExchange(ctx: SandboxContext, request: RequestLike): Exchange {
  const bearer = readBearer(request.headers.get('authorization'))
  return {
    bearer,
    requestId: ctx.nextId('request'),
    started: performance.now(),
    at: ctx.clock.now(),
    entry: {
      account_id: null,
      credential: bearer.kind === 'missing' ? null : bearer.masked,
      scenario: null,
      replayed: false,
      code: null,
    },
    headers: [],
  }
}

function finishExchange(
  ctx: SandboxContext,
  exchange: Exchange,
  request: RequestLike,
  path: string,
  operation: Operation | null,
  response: Response,
  stamped = false,
): Response {
  // @note Response.error() is the one response with status 0; reading `type`
  // would make a lazy server response build itself. A stamped response was
  // built with its headers: touching `headers` would make it build them again.
  if (response.status !== 0 && !stamped) {
    response.headers.set('x-request-id', exchange.requestId)
    for (const [name, value] of exchange.headers) {
      response.headers.set(name, value)
    }
    addAdapterHeaders(ctx, request, response)
  }
  // Field by field, not a spread: one object shape for every entry.
  const { entry: part } = exchange
  const entry: JournalEntry = {
    request_id: exchange.requestId,
    operation,
    method: request.method,
    path,
    status: response.status,
    account_id: part.account_id,
    credential: part.credential,
    scenario: part.scenario,
    replayed: part.replayed,
    code: part.code,
    duration_ms:
      Math.round((performance.now() - exchange.started) * 1000) / 1000,
    at: isoTime(exchange.at.getTime()),
  }
  ctx.journal.record(entry)
  ctx.options.onRequest?.(entry)
  return response
}

function renderError(
  ctx: SandboxContext,
  exchange: Exchange,
  error: unknown,
): Response {
  const sandboxError =
    error instanceof SandboxError
      ? error
      : error instanceof LimitReachedError
        ? limitReached(error)
        : new SandboxError(
            'internal_error',
            'The sandbox failed to answer this request; this is a bug in the sandbox, please report it with the request id.',
          )
  if (sandboxError.code === 'internal_error')
    reportUnexpected(error, exchange.requestId)
  exchange.entry.code = sandboxError.code
  return sandboxError.toResponse(exchange.requestId, ctx.options.errorFormat)
}

/**
 * Answers a path under the API that names no operation (404) or an
 * operation's path with another method (405), recording it in the journal.
 *
 * @example
 * answerUnrouted(ctx, request, url, 'method_not_allowed')
 */
export function answerUnrouted(
  ctx: SandboxContext,
  request: Request,
  url: URL,
  code: Extract<ErrorCode, 'not_found' | 'method_not_allowed'>,
): Response {
  const exchange = beginExchange(ctx, request)
  const error =
    code === 'not_found'
      ? new SandboxError(
          'not_found',
          `${clip(request.method)} ${clip(url.pathname)} is not an operation of this API; it has POST /v1/customers and POST /v2/tokens.`,
        )
      : new SandboxError(
          'method_not_allowed',
          `${clip(url.pathname)} takes POST only, not ${clip(request.method)}.`,
          { headers: { allow: 'POST' } },
        )
  return finishExchange(
    ctx,
    exchange,
    request,
    url.pathname,
    null,
    renderError(ctx, exchange, error),
  )
}

/**
 * Runs one operation through the contract's order of checks: authentication
 * → scenario or persona → rate limit → scope → content type → size → JSON →
 * idempotency → fields → conflicts, then records it in the journal.
 *
 * @example
 * const response = await runOperation(ctx, createCustomer, request, '/v1/customers')
 */
export async function runOperation(
  ctx: SandboxContext,
  spec: OperationSpec,
  request: RequestLike,
  path: string,
): Promise<Response> {
  if (!ctx.seeded) await ctx.ready
  const exchange = beginExchange(ctx, request)
  const finish = (response: Response, stamped = false): Response =>
    finishExchange(
      ctx,
      exchange,
      request,
      path,
      spec.operation,
      response,
      stamped,
    )
  let idempotencyKey: string | undefined
  let response: Response
  let stamped = false
  try {
    const latency = ctx.scenarios.latency()
    if (latency) {
      await sleep(
        latency.min +
          Math.floor(
            (ctx.random() / 2 ** 32) * (latency.max - latency.min + 1),
          ),
      )
    }
    const now = ctx.clock.now()
    const principal = authenticate(ctx.db, exchange.bearer, (accountId) =>
      accountClockOf(ctx, exchange, accountId).now().getTime(),
    )
    const accountClock = accountClockOf(ctx, exchange, principal.accountId)
    // @note Authentication comes before anything else (the contract's order),
    // so only a caller with a valid credential can make a call fail.
    const effect = takeScenario(
      ctx,
      spec.operation,
      request,
      exchange,
      principal.accountId,
    )
    if (effect?.status !== undefined || effect?.networkError) {
      if (effect.delayMs) await sleep(effect.delayMs)
      if (effect.networkError) {
        return finish(Response.error())
      }
      throw simulatedFailure(effect.status!)
    }

    if (principal.persona === 'unavailable') {
      exchange.entry.scenario = 'persona=unavailable'
      throw simulatedFailure(503)
    }
    if (principal.persona === 'slow') {
      exchange.entry.scenario = `persona=slow; delay_ms=${PERSONA_SLOW_MS}`
      await sleep(PERSONA_SLOW_MS)
    }
    applyRateLimit(ctx, principal, exchange, now.getTime())
    requireScope(principal, spec.scope)
    spec.authorize?.(ctx, principal)

    checkContentType(request.headers.get('content-type'), spec.bodyTypes)
    const text = await readBody(request, ctx.options.maxBodyBytes, {
      streamed: ctx.streamedBodies,
    })
    const body = parseJsonObject(text)

    const key = request.headers.get('idempotency-key')
    if (key !== null) {
      if (!IDEMPOTENCY_KEY.test(key)) {
        throw validationError([
          {
            field: 'Idempotency-Key',
            code: 'invalid_format',
            message:
              'Idempotency-Key must be 1 to 255 printable ASCII characters',
          },
        ])
      }
      const scoped = `${principal.accountId}\n${spec.operation}\n${key}`
      const lookup = ctx.idempotency.begin(
        scoped,
        hashString(text),
        now.getTime(),
        principal.accountId,
      )
      if (lookup.kind === 'replay') {
        exchange.entry.replayed = true
        return finish(
          stamp(ctx, request, exchange, lookup.response, [
            ['idempotent-replayed', 'true'],
          ]),
          true,
        )
      }
      if (lookup.kind === 'in-flight') {
        throw new SandboxError(
          'idempotency_in_progress',
          'A request with this Idempotency-Key is still being answered; retry once it has finished.',
          { headers: { 'retry-after': '1' } },
        )
      }
      if (lookup.kind === 'full') {
        throw new LimitReachedError(
          lookup.option,
          `This Idempotency-Key cannot be kept: ${lookup.option === 'idempotency.maxEntries' ? 'the sandbox' : 'this account'} already keeps ${lookup.max} keys whose window is still open, the most that ${lookup.option} (${lookup.max}) allows; none is dropped early, so that no retry becomes a duplicate. Nothing was stored. ${limitHint(lookup.option, 'Send the request without the key, wait for keys to expire (idempotency.ttlSeconds), reset the sandbox')}`,
        )
      }
      if (lookup.kind === 'reused') {
        throw new SandboxError(
          'idempotency_key_reused',
          'This Idempotency-Key was already used with a different request body; use a new key for a new request.',
        )
      }
      idempotencyKey = scoped
    }

    if (effect?.delayMs) await sleep(effect.delayMs)
    // @note Idempotency and rate-limit windows stay on the sandbox clock
    // (`now`): one account moving its clock must not expire another's keys.
    const result = spec.execute(ctx, principal, body, accountClock.now())
    if (ctx.storage && result.created) await persist(ctx, result.created)
    const answer: StoredResponse = {
      status: result.status,
      headers: [['content-type', 'application/json']],
      body: JSON.stringify(result.body),
    }
    if (result.headers) answer.headers.push(...result.headers)
    if (idempotencyKey !== undefined) {
      ctx.idempotency.complete(idempotencyKey, answer)
      idempotencyKey = undefined
    }
    response = stamp(ctx, request, exchange, answer)
    stamped = true
  } catch (error) {
    response = renderError(ctx, exchange, error)
  }
  if (idempotencyKey !== undefined) {
    // @note Only outcomes of the operation itself are worth replaying; a 422
    // leaves the key free so that the corrected request can use it.
    if (exchange.entry.code === 'email_taken') {
      ctx.idempotency.complete(idempotencyKey, await store(response))
    } else {
      ctx.idempotency.abandon(idempotencyKey)
    }
  }
  return finish(response, stamped)
}

/**
 * Waits until the data file holds `created`; a failed write takes the record
 * back and answers `storage_unavailable`, so no 201 is ever sent for a record
 * that was not stored.
 */
async function persist(
  ctx: SandboxContext,
  created: CreatedRecord,
): Promise<void> {
  // A reset during the write renews ctx.db: take the record back from its own.
  const { db } = ctx
  try {
    await ctx.storage!.persist(created, () => db.remove(created))
  } catch (error) {
    throw storageUnavailable(error as Error)
  }
}

/**
 * The problem for a write the data file could not take.
 *
 * @example
 * throw storageUnavailable(Object.assign(new Error('no space'), { code: 'ENOSPC' }))
 */
export function storageUnavailable(error: Error): SandboxError {
  const code = (error as { code?: string }).code ?? 'EIO'
  return new SandboxError(
    'storage_unavailable',
    `The sandbox could not store this write in its data file (${code}), so nothing was changed. Retry once the data file can be written again; GET /__sandbox/health shows the storage error.`,
    { headers: { 'retry-after': String(STORAGE_RETRY_AFTER_SECONDS) } },
  )
}

/** The Retry-After of `storage_unavailable` and of a degraded health check. */
export const STORAGE_RETRY_AFTER_SECONDS = 5

/**
 * The clock of the credential's account (its own, or the sandbox's), which
 * also stamps the exchange: its journal entry names the account, an expired
 * token's too, and is timed on that clock.
 */
function accountClockOf(
  ctx: SandboxContext,
  exchange: Exchange,
  accountId: string,
): SandboxClock {
  exchange.entry.account_id = accountId
  const clock = ctx.accounts.clockFor(accountId)
  if (clock !== ctx.clock) exchange.at = clock.now()
  return clock
}

function takeScenario(
  ctx: SandboxContext,
  operation: Operation,
  request: RequestLike,
  exchange: Exchange,
  accountId: string,
): ScenarioEffect | undefined {
  const header = request.headers.get('x-sandbox-scenario')
  let effect: ScenarioEffect | undefined
  if (header !== null) {
    try {
      effect = parseScenarioHeader(header)
    } catch (error) {
      throw validationError([
        {
          field: 'X-Sandbox-Scenario',
          code: 'invalid_format',
          message: (error as Error).message,
        },
      ])
    }
  } else {
    // The account's own queue first: only its requests consume it.
    effect =
      ctx.accounts.takeScenario(accountId, operation) ??
      ctx.scenarios.take(operation)
  }
  if (effect) {
    exchange.entry.scenario = [
      effect.status !== undefined ? `status=${effect.status}` : '',
      effect.delayMs !== undefined ? `delay_ms=${effect.delayMs}` : '',
      effect.networkError ? 'network_error' : '',
    ]
      .filter(Boolean)
      .join('; ')
  }
  return effect
}

/**
 * A scenario's answer: the status asked for, with the headers a real answer
 * of that status carries, so that clients exercise the same code path.
 */
function simulatedFailure(status: number): SandboxError {
  return new SandboxError(
    'simulated_failure',
    `A scenario asked for this call to fail with ${status}.`,
    { status, headers: SIMULATED_HEADERS[status] ?? {} },
  )
}

const SIMULATED_HEADERS: Record<number, Record<string, string>> = {
  401: {
    'www-authenticate': `Bearer realm="${REALM}", error="invalid_token", error_description="Simulated by a sandbox scenario"`,
  },
  403: {
    'www-authenticate': `Bearer realm="${REALM}", error="insufficient_scope", error_description="Simulated by a sandbox scenario"`,
  },
  429: { 'retry-after': '1' },
  503: { 'retry-after': '1' },
}

function applyRateLimit(
  ctx: SandboxContext,
  principal: Principal,
  exchange: Exchange,
  now: number,
): void {
  // The rate-limited persona has a window of its own, whatever the options say.
  const persona = principal.persona === 'rate-limited'
  const rateLimit = persona ? PERSONA_RATE_LIMIT : ctx.options.rateLimit
  const limiter = persona ? ctx.personaLimiter : ctx.rateLimiter
  if (!rateLimit || !limiter) return
  const result = limiter.hit(principal.secret, now)
  // IETF draft-ietf-httpapi-ratelimit-headers: structured fields.
  exchange.headers.push(
    [
      'ratelimit-policy',
      `"default";q=${result.limit};w=${rateLimit.windowSeconds}`,
    ],
    ['ratelimit', `"default";r=${result.remaining};t=${result.resetSeconds}`],
  )
  if (!result.allowed) {
    throw new SandboxError(
      'rate_limited',
      `This credential may make ${result.limit} requests per ${rateLimit.windowSeconds} s; try again in ${result.resetSeconds} s.`,
      { headers: { 'retry-after': String(result.resetSeconds) } },
    )
  }
}

async function store(response: Response): Promise<StoredResponse> {
  const body = await response.clone().text()
  return { status: response.status, headers: [...response.headers], body }
}

/**
 * Builds an answer with every header it will carry (its own, the exchange's,
 * the request id and the adapter's), so that nothing sets headers afterwards:
 * a server's lazy response then never builds a `Headers` object. The sets
 * never share a name, so name-value pairs do: merging objects measured four
 * to ten times slower.
 */
function stamp(
  ctx: SandboxContext,
  request: RequestLike,
  exchange: Exchange,
  answer: StoredResponse,
  extra: [string, string][] = [],
): Response {
  return new ctx.Response(answer.body, {
    status: answer.status,
    statusText: STATUS_TEXT[answer.status] ?? '',
    headers: [
      ...answer.headers,
      ...extra,
      ...exchange.headers,
      ...(ctx.responseHeaders?.(request) ?? []),
      ['x-request-id', exchange.requestId],
    ],
  })
}
