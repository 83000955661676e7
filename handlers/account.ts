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
function accountOf(ctx: SandboxContext, request: Request): AccountControls {
  const bearer = readBearer(request.headers.get('authorization'))
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
  resolve: (call, { ctx }) => resolve(accountOf(ctx, call.request), call, ctx),
})

const clockNow = ({ accountId, clock }: AccountControls): Response =>
  json(200, {
    account_id: accountId,
    now: clock.now().toISOString(),
    frozen: clock.frozen,
    own: clock.own,
  })

const accountClock = (description: string) => ({
  200: { description, schema: schemaRef('SandboxAccountClock') },
})

/**
 * The account-scoped calls, `/__sandbox/account/{clock,scenarios,requests}`,
 * each with its entry in the OpenAPI document: the same calls as the
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
    {
      summary: 'Read the account clock',
      operationId: 'getAccountClock',
      description:
        "The clock of the account whose API key is the Bearer credential: its own (`own: true`) once set or advanced, the sandbox clock otherwise. It drives that account's `created_at`, token expiry and journal times; idempotency and rate-limit windows stay on the sandbox clock.",
      answers: accountClock("The account's time."),
    },
    clockNow,
  ),
  accountRoute(
    'POST',
    'clock',
    {
      summary: 'Set or advance the account clock',
      operationId: 'setAccountClock',
      description:
        'Gives the account a clock of its own, starting from the sandbox time, and moves it; other accounts and the sandbox clock stay where they are (like a Stripe test clock).',
      answers: accountClock("The account's new time."),
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
    {
      summary: 'Drop the account clock',
      operationId: 'clearAccountClock',
      description: 'The account follows the sandbox clock again.',
      answers: accountClock("The account's time."),
    },
    (account) => {
      account.clock.reset()
      return clockNow(account)
    },
  ),
  accountRoute(
    'GET',
    'scenarios',
    {
      summary: 'List the account scenarios',
      operationId: 'listAccountScenarios',
      description: "The scenarios queued for the account's own calls.",
      answers: {
        200: {
          description: 'Queued scenarios.',
          schema: listOf('scenarios', 'SandboxScenario'),
        },
      },
    },
    (account) =>
      json(200, { scenarios: account.scenarios.list().map(scenarioView) }),
  ),
  accountRoute(
    'POST',
    'scenarios',
    {
      summary: 'Queue an account scenario',
      operationId: 'queueAccountScenario',
      description:
        "Fails or delays the account's next matching calls; only requests authenticated as the account consume it, before the sandbox-wide queue. `limits.scenarios` bounds each account's queue and all of them together.",
      answers: {
        201: {
          description: 'The queued scenario.',
          schema: schemaRef('SandboxScenario'),
        },
      },
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
    {
      summary: 'Clear the account scenarios',
      operationId: 'clearAccountScenarios',
      description: "Empties the account's queue.",
      answers: { 204: { description: 'Done.' } },
    },
    (account) => {
      account.scenarios.clear()
      return new Response(null, { status: 204 })
    },
  ),
  accountRoute(
    'GET',
    'requests',
    {
      summary: 'Read the account journal',
      operationId: 'listAccountRequests',
      description:
        "The journal's entries of requests authenticated as the account, newest first (a view of the journal, so `journalLimit` bounds it).",
      answers: {
        200: {
          description: "The account's requests, newest first.",
          schema: listOf('requests', 'SandboxJournalEntry'),
        },
      },
      parameters: [
        {
          name: 'limit',
          in: 'query',
          required: false,
          schema: { type: 'integer', minimum: 0 },
        },
      ],
    },
    async (account, call, ctx) => {
      const limit = readLimit(call.url)
      const shared = ctx.storage?.journal
      return json(200, {
        requests: shared
          ? await shared.list({ ...limit, accountId: account.id })
          : account.journal.list(limit),
      })
    },
  ),
  accountRoute(
    'DELETE',
    'requests',
    {
      summary: 'Clear the account journal',
      operationId: 'clearAccountRequests',
      description:
        "Hides the account's entries so far from this view; the sandbox journal keeps them.",
      answers: { 204: { description: 'Done.' } },
    },
    async (account, _, ctx) => {
      account.journal.clear()
      await ctx.storage?.journal?.clear(account.id)
      return new Response(null, { status: 204 })
    },
  ),
]
