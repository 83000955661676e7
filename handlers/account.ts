// The account-scoped controls, /__sandbox/account/*, guarded by the account's own API key.
import { z } from 'zod'
import type { AccountControls } from '../src/request/account-controls.ts'
import { authenticate, readBearer, REALM } from '../src/request/auth.ts'
import type { Route, SandboxContext } from '../src/request/context.ts'
import { SandboxError } from '../src/request/errors.ts'
import { json } from '../src/request/pipeline.ts'
import { ClockBodySchema, ScenarioBodySchema } from '../src/model/schemas.ts'
import {
  listOf,
  schemaRef,
  type SandboxCall,
  type SurfaceDocument,
  type SurfaceRoute,
} from '../src/request/sandbox-api.ts'
import {
  LIMIT_PARAMETER,
  moveClock,
  queueScenario,
  readLimit,
  SCENARIO_BODY,
  scenarioView,
} from './sandbox.ts'

const AnyObject = z.record(z.string(), z.unknown())

/**
 * The account named by the request's `Authorization: Bearer <API key>`: the
 * key both picks the account and authorizes the call, so a test worker needs
 * no admin token. Tokens are refused: a `customers:read` token must not move
 * its account's clock.
 */
function accountOf(ctx: SandboxContext, call: SandboxCall): AccountControls {
  const bearer = readBearer(call.request.headers.get('authorization'))
  const principal = authenticate(ctx.db, bearer, ctx.clock.now().getTime())
  if (principal.kind !== 'api-key') {
    throw new SandboxError(
      'insufficient_scope',
      "An account's own controls (/__sandbox/account/…) take one of the account's API keys, not a token.",
      {
        headers: {
          'www-authenticate': `Bearer realm="${REALM}", error="insufficient_scope"`,
        },
      },
    )
  }
  // @note The key's account, even when sandbox.db deleted its record.
  return ctx.accounts.controls(principal.accountId)
}

const accountRoute = (
  method: Route['method'],
  path: string,
  document: SurfaceDocument,
  resolve: (
    account: AccountControls,
    call: SandboxCall,
    ctx: SandboxContext,
  ) => Response | Promise<Response>,
): SurfaceRoute<{ ctx: SandboxContext }> => ({
  method,
  path: `account/${path}`,
  // Guarded by the account's own API key instead of the admin token.
  guard: 'account',
  document,
  resolve: (call, { ctx }) => resolve(accountOf(ctx, call), call, ctx),
})

const clockNow = ({ accountId, clock }: AccountControls): Response =>
  json(200, {
    account_id: accountId,
    now: clock.now().toISOString(),
    frozen: clock.frozen,
    own: clock.own,
  })

const accountClock = { 200: { schema: schemaRef('SandboxAccountClock') } }

/**
 * The account-scoped calls, `/__sandbox/account/{clock,scenarios,requests}`,
 * each with its entry in the OpenAPI document (its words in
 * `account.docs.ts`): the same calls as the
 * sandbox-wide ones, for the account whose API key is the Bearer
 * credential. In the spirit of Stripe's test clocks.
 *
 * @example
 * await fetch(`${url}/__sandbox/account/clock`, {
 *   method: 'POST',
 *   headers: { authorization: `Bearer ${apiKey}` },
 *   body: JSON.stringify({ advance_seconds: 3600 }),
 * })
 * @see https://docs.stripe.com/billing/testing/test-clocks
 */
export const ACCOUNT_ROUTES: readonly SurfaceRoute<{
  ctx: SandboxContext
}>[] = [
  accountRoute(
    'GET',
    'clock',
    { operationId: 'getAccountClock', answers: accountClock },
    clockNow,
  ),
  accountRoute(
    'POST',
    'clock',
    {
      operationId: 'setAccountClock',
      answers: accountClock,
      body: { schema: ClockBodySchema },
      throws: ['validation_failed', 'out_of_range'],
    },
    async (account, call) => {
      moveClock(account.clock, await call.body(AnyObject))
      return clockNow(account)
    },
  ),
  accountRoute(
    'DELETE',
    'clock',
    { operationId: 'clearAccountClock', answers: accountClock },
    (account) => {
      account.clock.reset()
      return clockNow(account)
    },
  ),
  accountRoute(
    'GET',
    'scenarios',
    {
      operationId: 'listAccountScenarios',
      answers: { 200: { schema: listOf('scenarios', 'SandboxScenario') } },
    },
    (account) =>
      json(200, { scenarios: account.scenarios.list().map(scenarioView) }),
  ),
  accountRoute(
    'POST',
    'scenarios',
    {
      operationId: 'queueAccountScenario',
      answers: { 201: { schema: schemaRef('SandboxScenario') } },
      body: SCENARIO_BODY,
      throws: ['limit_reached'],
    },
    async (account, call) => {
      const body = await call.body(ScenarioBodySchema)
      return json(201, scenarioView(queueScenario(account.scenarios, body)))
    },
  ),
  accountRoute(
    'DELETE',
    'scenarios',
    { operationId: 'clearAccountScenarios', answers: { 204: {} } },
    (account) => {
      account.scenarios.clear()
      return new Response(null, { status: 204 })
    },
  ),
  accountRoute(
    'GET',
    'requests',
    {
      operationId: 'listAccountRequests',
      answers: { 200: { schema: listOf('requests', 'SandboxJournalEntry') } },
      parameters: [LIMIT_PARAMETER],
    },
    async (account, call, ctx) => {
      const limit = readLimit(call.url)
      const store = ctx.storage
      return json(200, {
        requests: store?.journal
          ? await (
              await import('../src/request/fleet-journal.ts')
            ).listFleetJournal(store, { ...limit, accountId: account.id })
          : account.journal.list(limit),
      })
    },
  ),
  accountRoute(
    'DELETE',
    'requests',
    { operationId: 'clearAccountRequests', answers: { 204: {} } },
    async (account, _, ctx) => {
      account.journal.clear()
      const store = ctx.storage
      if (store?.journal)
        await (
          await import('../src/request/fleet-journal.ts')
        ).clearFleetJournal(store, account.id)
      return new Response(null, { status: 204 })
    },
  ),
]
