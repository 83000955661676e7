// srvx's FastResponse is the platform's Response, or on Node a lazy one
// that the server writes without building a web stream.
import { FastResponse } from 'srvx'
import { authenticate, REALM, requireScope, type Principal } from './auth.ts'
import type {
  RequestState,
  Route,
  RouteCall,
  SandboxContext,
} from './context.ts'
import type { StoreWrite } from '../model/store.ts'
import type { OperationSpec } from './define-operation.ts'
import { SandboxError, STATUS_TEXT, validationError } from './errors.ts'
import type { Operation } from './journal.ts'
import { LimitReachedError, limitHint } from './limits.ts'
import { renderError } from './router.ts'
import { parseScenarioHeader, type ScenarioEffect } from './scenarios.ts'
import { checkContentType, parseJsonObject, readBody } from './validation.ts'
import type { StoredResponse } from './idempotency.ts'
import { PERSONA_RATE_LIMIT, PERSONA_SLOW_MS } from '../model/personas.ts'
import { sleep, hashString } from '../_utils.ts'
import type { SandboxClock } from '../model/clock.ts'

const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/

/**
 * Thrown when a reset (or load, restore) replaced the data a request was
 * sent to while it waited: like a restarted server, the sandbox drops it
 * rather than write into the new data and take the first of its new ids.
 */
const DROPPED = Symbol('dropped by a reset')

/** A JSON response with the sandbox's content type. */
export function json(
  status: number,
  body: unknown,
  headers?: Record<string, string>,
): Response {
  return new FastResponse(JSON.stringify(body), {
    status,
    statusText: STATUS_TEXT[status] ?? '',
    headers: { 'content-type': 'application/json', ...headers },
  })
}

/**
 * Runs one operation through the contract's order of checks: authentication
 * → scenario or persona → rate limit → scope → content type → size → JSON →
 * idempotency → fields → conflicts. Errors are thrown, for the core's one
 * catch to render.
 *
 * @example
 * const response = await runOperation(ctx, createCustomer, call)
 */
export async function runOperation(
  ctx: SandboxContext,
  spec: OperationSpec,
  { request, state }: RouteCall,
): Promise<Response> {
  if (!ctx.seeded) await ctx.ready
  let idempotencyKey: string | undefined
  // The store a key is begun in: a reset meanwhile makes a new one (and the
  // request is dropped before it begins a key in that one).
  const keys = ctx.idempotency
  let effect: ScenarioEffect | undefined
  let waited = false
  // A scenario's delay holds whatever answer the call gets, once: a refusal
  // or a replay that takes a queued delay waits as a success would.
  const wait = async (): Promise<void> => {
    if (waited || !effect?.delayMs) return
    waited = true
    await sleep(effect.delayMs)
  }
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
    const principal = authenticate(ctx.db, state.bearer, (accountId) =>
      accountClockOf(ctx, state, accountId).now().getTime(),
    )
    const accountClock = accountClockOf(ctx, state, principal.accountId)
    // @note Authentication comes before anything else (the contract's order),
    // so only a caller with a valid credential can make a call fail.
    effect = takeScenario(
      ctx,
      spec.operation,
      request,
      state,
      principal.accountId,
    )
    if (effect && ctx.storage && !request.headers.has('x-sandbox-scenario')) {
      // A queued fault taken is gone for good: a restart must not bring it back.
      await ctx.storage.saveState().catch((error: Error) => {
        throw storageUnavailable(error)
      })
    }
    if (effect?.status !== undefined || effect?.networkError) {
      await wait()
      if (effect.networkError) return Response.error()
      throw simulatedFailure(effect.status!)
    }

    if (principal.persona === 'unavailable') {
      state.entry.scenario = 'persona=unavailable'
      throw simulatedFailure(503)
    }
    if (principal.persona === 'slow') {
      state.entry.scenario = `persona=slow; delay_ms=${PERSONA_SLOW_MS}`
      await sleep(PERSONA_SLOW_MS)
    }
    applyRateLimit(ctx, principal, state, now.getTime())
    requireScope(principal, spec.scope)
    spec.authorize?.(ctx, principal)

    checkContentType(request.headers.get('content-type'), spec.bodyTypes)
    const text = await readBody(request, ctx.options.maxBodyBytes)
    const body = parseJsonObject(text)
    if (ctx.db !== state.db) throw DROPPED

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
      const lookup = keys.begin(
        scoped,
        hashString(text),
        now.getTime(),
        principal.accountId,
      )
      if (lookup.kind === 'replay') {
        state.entry.replayed = true
        state.entry.code = lookup.response.code ?? null
        await wait()
        return respond(state, lookup.response, [
          ['idempotent-replayed', 'true'],
        ])
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

    await wait()
    if (ctx.db !== state.db) throw DROPPED
    // @note Idempotency and rate-limit windows stay on the sandbox clock
    // (`now`): one account moving its clock must not expire another's keys.
    const result = await spec.execute(ctx, principal, body, accountClock.now())
    const answer: StoredResponse = {
      status: result.status,
      headers: [['content-type', 'application/json']],
      body: JSON.stringify(result.body),
    }
    if (result.headers) answer.headers.push(...result.headers)
    if (ctx.storage && (result.created || idempotencyKey !== undefined)) {
      // @note The record and the key that replays it are stored as one
      // write: a retry after a restart finds both or neither.
      await commit(ctx, {
        ...(result.created && { created: result.created }),
        ...(idempotencyKey !== undefined && {
          idempotencyKey: keys.toSaved(idempotencyKey, answer),
        }),
      })
    }
    if (idempotencyKey !== undefined) {
      keys.complete(idempotencyKey, answer)
      idempotencyKey = undefined
    }
    return respond(state, answer)
  } catch (error) {
    if (idempotencyKey !== undefined) {
      // @note Only outcomes of the operation itself are worth replaying; a
      // 422 leaves the key free so that the corrected request can use it.
      if (error instanceof SandboxError && spec.replays?.includes(error.code)) {
        await wait()
        const response = renderError(ctx, state, error)
        const kept: StoredResponse = {
          status: response.status,
          headers: [...response.headers],
          body: await response.clone().text(),
          code: error.code,
        }
        // A refusal is kept only if it can be stored: unstored, a retry
        // after a restart would be answered anew, which a replay must not be.
        if (ctx.storage) {
          try {
            await commit(ctx, {
              idempotencyKey: keys.toSaved(idempotencyKey, kept),
            })
          } catch {
            keys.abandon(idempotencyKey)
            return response
          }
        }
        keys.complete(idempotencyKey, kept)
        return response
      }
      keys.abandon(idempotencyKey)
    }
    if (error === DROPPED) return Response.error()
    await wait()
    throw error
  }
}

/**
 * The route of an operation: its method and path, its name, and the
 * pipeline that runs it.
 *
 * @example
 * operationRoute(ctx, createCustomer) // { method: 'POST', path: '/v1/customers', operation: 'createCustomer', resolve }
 */
export function operationRoute(
  ctx: SandboxContext,
  spec: OperationSpec,
): Route {
  return {
    method: spec.method,
    path: spec.path,
    operation: spec.operation,
    resolve: (call) => runOperation(ctx, spec, call),
  }
}

/**
 * Waits until the durable store holds `write`; a failed write takes the
 * record back and answers `storage_unavailable`, so no 201 is ever sent for
 * a record that was not stored.
 */
async function commit(ctx: SandboxContext, write: StoreWrite): Promise<void> {
  // A reset during the write renews ctx.db: take the record back from its own.
  const { db } = ctx
  const { created } = write
  try {
    await ctx.storage!.commit(
      write,
      created === undefined ? undefined : () => db.remove(created),
    )
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
 * also stamps the state: its journal entry names the account, an expired
 * token's too, and is timed on that clock.
 */
function accountClockOf(
  ctx: SandboxContext,
  state: RequestState,
  accountId: string,
): SandboxClock {
  state.entry.account_id = accountId
  const clock = ctx.accounts.clockFor(accountId)
  if (clock !== ctx.clock) state.at = clock.now()
  return clock
}

function takeScenario(
  ctx: SandboxContext,
  operation: Operation,
  request: Request,
  state: RequestState,
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
    state.entry.scenario = [
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
  state: RequestState,
  now: number,
): void {
  // The rate-limited persona has a window of its own, whatever the options say.
  const persona = principal.persona === 'rate-limited'
  const rateLimit = persona ? PERSONA_RATE_LIMIT : ctx.options.rateLimit
  const limiter = persona ? ctx.personaLimiter : ctx.rateLimiter
  if (!rateLimit || !limiter) return
  const result = limiter.hit(principal.secret, now)
  // IETF draft-ietf-httpapi-ratelimit-headers: structured fields.
  state.headers.push(
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

/**
 * An answer as the idempotency store keeps it, as a `Response` that already
 * carries the request's own headers: they are built once, with the answer.
 */
function respond(
  state: RequestState,
  answer: StoredResponse,
  extra: [string, string][] = [],
): Response {
  state.answer = new FastResponse(answer.body, {
    status: answer.status,
    statusText: STATUS_TEXT[answer.status] ?? '',
    headers: [...answer.headers, ...extra, ...state.headers],
  })
  return state.answer
}
