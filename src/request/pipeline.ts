// An operation's way through the contract's order of checks, to its handler and its stored answer.
import { Answer } from '../model/problems.ts'
import { authenticate, REALM, requireScope, type Principal } from './auth.ts'
import {
  inTurn,
  type RequestState,
  type Route,
  type RouteCall,
  type SandboxContext,
} from './context.ts'
import { StoreConflict, type Store, type StoreWrite } from '../model/store.ts'
import type { Database } from '../model/db.ts'
import type { RateLimitResult } from './rate-limit.ts'
import type { OperationSpec } from './define-operation.ts'
import { storageProblem } from './storage-problem.ts'
import {
  MAX_STORE_ATTEMPTS,
  SandboxError,
  STATUS_TEXT,
  storeBusy,
  validationError,
} from './errors.ts'
import type { Operation } from './journal.ts'
import { LimitReachedError, limitHint } from './limits.ts'
import { renderError } from './router.ts'
import {
  parseScenarioHeader,
  type ScenarioEffect,
  type TakeReceipt,
} from './scenarios.ts'
import { checkContentType, parseJsonObject, readBody } from './validation.ts'
import type { IdempotencyLookup, StoredResponse } from './idempotency.ts'
import { PERSONA_RATE_LIMIT, PERSONA_SLOW_MS } from '../model/personas.ts'
import { sleep, hashString, bodyFingerprint } from '../_utils.ts'
import type { SandboxClock } from '../model/clock.ts'

const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/

/**
 * Thrown when a reset (or load, restore) replaced the data a request was
 * sent to while it waited: like a restarted server, a sandbox of its own
 * drops it rather than write into the new data and take the first of its
 * new ids; a replica of a fleet answers it `503` with `Retry-After`.
 */
const DROPPED = Symbol('dropped by a reset')

// The data that a replica of a fleet took from its store (another replica's
// whole state): its requests in flight are answered, not dropped.
const takenFromStore = new WeakSet<Database>()

/**
 * Marks `db` as the whole state another replica stored: a request in
 * flight when it came is answered `503` with `Retry-After`, as one that a
 * reset through this replica overtook is; in a sandbox with no shared
 * store, one that a reset overtook is dropped.
 *
 * @example
 * await adopt(state)
 * markTakenFromStore(ctx.db)
 */
export function markTakenFromStore(db: Database): void {
  takenFromStore.add(db)
}

/** A JSON response with the sandbox's content type. */
export function json(
  status: number,
  body: unknown,
  headers?: Record<string, string>,
): Response {
  return new Answer(JSON.stringify(body), {
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
  { request, state, params }: RouteCall,
): Promise<Response> {
  if (!ctx.seeded) await ctx.ready
  let idempotencyKey: string | undefined
  // Claims this request's key (its body's fingerprint taken once), again
  // after another replica wrote first.
  let claim: (() => IdempotencyLookup) | undefined
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
    const taking = takeStoredScenario(
      ctx,
      spec.operation as Operation,
      request,
      state,
      principal.accountId,
    )
    effect = taking instanceof Promise ? await taking : taking
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
    const limiting = applyRateLimit(ctx, principal, state, now.getTime())
    if (limiting) await limiting
    requireScope(principal, spec.scope)
    spec.authorize?.(ctx, principal)

    // An operation without a body reads none, and keys no retry.
    let text = ''
    let body: Record<string, unknown> = {}
    if (spec.bodyTypes) {
      checkContentType(request.headers.get('content-type'), spec.bodyTypes)
      text = await readBody(request, ctx.options.maxBodyBytes)
      body = parseJsonObject(text)
    }
    if (ctx.db !== state.db) throw DROPPED

    const key = spec.bodyTypes ? request.headers.get('idempotency-key') : null
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
      const fingerprint = await bodyFingerprint(text)
      claim = () =>
        keys.begin(
          scoped,
          fingerprint,
          now.getTime(),
          principal.accountId,
          () => hashString(text),
        )
      const replay = claimed(claim())
      if (replay) {
        state.entry.replayed = true
        state.entry.code = replay.code ?? null
        await wait()
        return respond(state, replay, [['idempotent-replayed', 'true']])
      }
      idempotencyKey = scoped
    }

    if (effect?.delayMs) await wait()
    if (ctx.db !== state.db) throw DROPPED
    // @note Idempotency and rate-limit windows stay on the sandbox clock
    // (`now`): one account moving its clock must not expire another's keys.
    let answer: StoredResponse
    for (let attempt = 1; ; attempt++) {
      // @note A store that loads accounts as asked holds this one until the
      // answer; only a whole new state put back meanwhile (another
      // replica's reset) lets go of it, and the checks would then read
      // none of its records.
      if (ctx.storage?.loaded?.(principal.accountId) === false) throw DROPPED
      // @note Taken just before the checks, which run before execute awaits.
      const decidedAt = ctx.storage?.version?.()
      const result = await spec.execute(
        ctx,
        principal,
        body,
        accountClock.now(),
        params,
      )
      answer = {
        status: result.status,
        headers: [['content-type', 'application/json']],
        body: JSON.stringify(result.body),
      }
      if (result.headers) answer.headers.push(...result.headers)
      if (!ctx.storage || (!result.created && idempotencyKey === undefined))
        break
      // @note The record and the key that replays it are stored as one
      // write: a retry after a restart finds both or neither.
      const stored = await commit(
        ctx,
        {
          ...(result.created && { created: result.created }),
          ...(idempotencyKey !== undefined && {
            idempotencyKey: keys.toSaved(idempotencyKey, answer),
          }),
        },
        decidedAt,
      )
      if (stored) break
      // Another replica wrote first: decide again on what the store holds.
      if (ctx.db !== state.db) throw DROPPED
      if (attempt >= MAX_STORE_ATTEMPTS) throw storeBusy()
      if (idempotencyKey !== undefined) {
        // @note The key is claimed again too, on the keys the store holds
        // now: the same key may have reached another replica, which
        // answered it first, and the fleet's keys count toward the caps.
        const held = idempotencyKey
        idempotencyKey = undefined
        let lookup = claim!()
        // Still this request's own claim: made again, against caps that
        // now count the keys the other replicas stored.
        if (lookup.kind === 'in-flight') {
          keys.abandon(held)
          lookup = claim!()
        }
        const replay = claimed(lookup)
        if (replay) {
          state.entry.replayed = true
          state.entry.code = replay.code ?? null
          return respond(state, replay, [['idempotent-replayed', 'true']])
        }
        idempotencyKey = held
      }
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
          const stored = await commit(ctx, {
            idempotencyKey: keys.toSaved(idempotencyKey, kept),
          }).catch(() => false)
          if (!stored) {
            keys.abandon(idempotencyKey)
            return response
          }
        }
        keys.complete(idempotencyKey, kept)
        return response
      }
      keys.abandon(idempotencyKey)
    }
    if (error === DROPPED) {
      // @note A replica answers what its own reset overtook as the others
      // do: behind a load balancer, which replica ran the reset is chance,
      // and a closed connection would read as a replica that died.
      if (!takenFromStore.has(ctx.db) && ctx.storage?.sync === undefined)
        return Response.error()
      throw await overtaken(ctx)
    }
    await wait()
    throw error
  }
}

/**
 * The `503` of a request that a reset or a restore overtook on a replica
 * of a fleet: nothing was changed, and a retry is answered from the new
 * data. Its words are loaded when first needed, as `storageProblem`'s are.
 *
 * @example
 * if (ctx.db !== state.db) throw await overtaken(ctx)
 */
export async function overtaken(ctx: SandboxContext): Promise<SandboxError> {
  // Asked before the load: another reset may replace ctx.db meanwhile.
  const byAnotherReplica = takenFromStore.has(ctx.db)
  return (await import('./storage-errors.ts')).overtakenProblem(
    byAnotherReplica,
  )
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
    // The document's `{name}` is the router's `:name`.
    path: spec.path.replace(/\{([A-Za-z_]\w*)\}/g, ':$1'),
    // @note A name outside OPERATION_NAMES (an operation a test defines)
    // is journaled and matched by scenarios as it is.
    operation: spec.operation as Operation,
    resolve: (call) => runOperation(ctx, spec, call),
  }
}

/**
 * What claiming an `Idempotency-Key` gave: the answer to replay when the
 * key was answered already, nothing when it is now this request's; a key
 * in flight, one used with another body, or one past the caps is a problem
 * to answer.
 *
 * @example
 * const replay = claimed(keys.begin(key, await bodyFingerprint(text), Date.now(), accountId))
 */
function claimed(lookup: IdempotencyLookup): StoredResponse | undefined {
  if (lookup.kind === 'replay') return lookup.response
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
  return undefined
}

/**
 * Waits until the durable store holds `write`; a failed write takes the
 * record back and answers `storage_unavailable`, so no 201 is ever sent for
 * a record that was not stored.
 */
async function commit(
  ctx: SandboxContext,
  write: StoreWrite,
  decidedAt?: number,
): Promise<boolean> {
  // A reset during the write renews ctx.db: take the record back from its own.
  const { db } = ctx
  const { created } = write
  const store = ctx.storage!
  // Told to the snapshots taken meanwhile, which keep its record only once stored.
  const under = (ctx.writesUnderWay ??= new Set())
  let writing: Promise<void> | undefined
  try {
    writing = store.commit(
      write,
      created === undefined ? undefined : () => db.remove(created),
      decidedAt,
    )
    under.add(writing)
    await writing
    return true
  } catch (error) {
    if (!(error instanceof StoreConflict))
      throw await storageProblem(error as Error, store)
  } finally {
    if (writing) under.delete(writing)
  }
  // Brings in what the other replica stored before deciding again.
  await store.sync!().catch(async (error: Error) => {
    throw await storageProblem(error, store)
  })
  return false
}

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

/**
 * Takes the scenario that applies, and stores the take of a queued one: a
 * fault is taken once, across a restart and across the replicas of a fleet
 * (one that another replica took meanwhile is not taken again here). With
 * nothing to store it is taken at once, with no turn of the event loop.
 */
function takeStoredScenario(
  ctx: SandboxContext,
  operation: Operation,
  request: Request,
  state: RequestState,
  accountId: string,
): ScenarioEffect | undefined | Promise<ScenarioEffect | undefined> {
  const store = ctx.storage
  const queued = !request.headers.has('x-sandbox-scenario')
  if (!store || !queued)
    return takeScenario(ctx, operation, request, state, accountId)
  if (!store.sync)
    return takeAndStore(ctx, operation, request, state, accountId)
  // Nothing queued for this call: nothing to take, so no wait behind the
  // takes under way (a take under way holds its scenario in the queue).
  if (
    !ctx.accounts.holdsScenario(accountId, operation) &&
    !ctx.scenarios.holds(operation)
  )
    return undefined
  // @note One take at a time in a replica of a fleet: a take that another
  // replica won is put back before it is taken from the store's queues, and
  // no other request here may take it meanwhile.
  return inTurn(ctx, 'scenarioTurn', () =>
    takeAndStore(ctx, operation, request, state, accountId),
  )
}

/** Gives back a take that `receipt` describes, from the queue it came from. */
function untake(
  ctx: SandboxContext,
  taken: { account_id: string | null },
  receipt: TakeReceipt,
): void {
  if (taken.account_id !== null)
    ctx.accounts.untakeScenario(taken.account_id, receipt)
  else ctx.scenarios.untake(receipt)
}

async function takeAndStore(
  ctx: SandboxContext,
  operation: Operation,
  request: Request,
  state: RequestState,
  accountId: string,
): Promise<ScenarioEffect | undefined> {
  const store = ctx.storage
  const queued = !request.headers.has('x-sandbox-scenario')
  for (let attempt = 1; ; attempt++) {
    const receipt: TakeReceipt = {}
    const taken = { account_id: null as string | null, operation }
    const decidedAt = store?.version?.()
    const effect = takeScenario(
      ctx,
      operation,
      request,
      state,
      accountId,
      taken,
      receipt,
    )
    if (!effect || !store || !queued) return effect
    // @note In a fleet the take is applied here once stored, as the other
    // replicas apply it: taken before, it could hide from this copy a take
    // of another replica's that is applied meanwhile, and be given back too.
    const fleet = store.sync !== undefined
    if (fleet) untake(ctx, taken, receipt)
    try {
      await store.commit({ taken }, undefined, decidedAt)
      if (fleet) {
        if (taken.account_id !== null)
          ctx.accounts.takeScenario(taken.account_id, operation)
        else ctx.scenarios.take(operation)
      }
      return effect
    } catch (error) {
      if (!(error instanceof StoreConflict) || !fleet)
        throw await storageProblem(error as Error, store)
    }
    if (attempt >= MAX_STORE_ATTEMPTS) throw storeBusy()
    // Take again from the stored queues.
    await store.sync!().catch(async (error: Error) => {
      throw await storageProblem(error, store)
    })
  }
}

function takeScenario(
  ctx: SandboxContext,
  operation: Operation,
  request: Request,
  state: RequestState,
  accountId: string,
  taken: { account_id: string | null } = { account_id: null },
  receipt?: TakeReceipt,
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
    effect = ctx.accounts.takeScenario(accountId, operation, receipt)
    if (effect) taken.account_id = accountId
    else effect = ctx.scenarios.take(operation, receipt)
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

/**
 * Counts the call in the credential's window and sets the rate-limit
 * headers, or throws `429`; only a window that a fleet's store keeps is
 * waited for.
 */
function applyRateLimit(
  ctx: SandboxContext,
  principal: Principal,
  state: RequestState,
  now: number,
): Promise<void> | undefined {
  // The rate-limited persona has a window of its own, whatever the options say.
  const persona = principal.persona === 'rate-limited'
  const rateLimit = persona ? PERSONA_RATE_LIMIT : ctx.options.rateLimit
  const limiter = persona ? ctx.personaLimiter : ctx.rateLimiter
  if (!rateLimit || !limiter) return undefined
  const store = ctx.storage
  if (store?.hit) {
    return sharedHit(store, rateLimit, principal.secret, now).then((result) =>
      limitRate(state, rateLimit, result),
    )
  }
  limitRate(state, rateLimit, limiter.hit(principal.secret, now))
  return undefined
}

/** Sets the rate-limit headers of a counted call, or throws `429`. */
function limitRate(
  state: RequestState,
  rateLimit: { windowSeconds: number },
  result: RateLimitResult,
): void {
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
 * Counts a hit in a window that every replica of a fleet shares: the
 * window is the sandbox clock's, the count the store's.
 */
async function sharedHit(
  store: Store,
  { limit, windowSeconds }: { limit: number; windowSeconds: number },
  secret: string,
  now: number,
): Promise<RateLimitResult> {
  const windowMs = windowSeconds * 1000
  const start = Math.floor(now / windowMs) * windowMs
  const key = `${hashString(secret)}:${windowSeconds}:${start}`
  const count = await store.hit!(key, windowMs).catch(async (error: Error) => {
    throw await storageProblem(error, store)
  })
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds: Math.max(1, Math.ceil((start + windowMs - now) / 1000)),
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
  state.answer = new Answer(answer.body, {
    status: answer.status,
    statusText: STATUS_TEXT[answer.status] ?? '',
    headers: [...answer.headers, ...extra, ...state.headers],
  })
  return state.answer
}
