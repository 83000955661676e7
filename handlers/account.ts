// The account-scoped controls, /__sandbox/account/*, guarded by the account's own API key.
import { z } from 'zod'
import type { AccountControls } from '../src/request/account-controls.ts'
import { authenticate, readBearer, REALM } from '../src/request/auth.ts'
import type { Route, SandboxContext } from '../src/request/context.ts'
import { SandboxError } from '../src/request/errors.ts'
import { json } from '../src/request/pipeline.ts'
import { ScenarioBodySchema } from '../src/model/schemas.ts'
import { sandboxRoute, type SandboxCall } from '../src/request/sandbox-api.ts'
import { moveClock, queueScenario, readLimit, scenarioView } from './sandbox.ts'

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

/**
 * The account-scoped calls, `/__sandbox/account/{clock,scenarios,requests}`:
 * the same calls as the sandbox-wide ones, for the account whose API key is
 * the Bearer credential. In the spirit of Stripe's test clocks.
 *
 * @example
 * await fetch(`${url}/__sandbox/account/clock`, {
 *   method: 'POST',
 *   headers: { authorization: `Bearer ${apiKey}` },
 *   body: JSON.stringify({ advance_seconds: 3600 }),
 * })
 * @see https://docs.stripe.com/billing/testing/test-clocks
 */
export function accountRoutes(ctx: SandboxContext): Route[] {
  const route = (
    method: Route['method'],
    path: string,
    resolve: (
      account: AccountControls,
      call: SandboxCall,
    ) => Response | Promise<Response>,
  ): Route =>
    // Guarded by the account's own API key instead of the admin token.
    sandboxRoute(
      ctx,
      method,
      `account/${path}`,
      (call) => resolve(accountOf(ctx, call.request), call),
      { adminGuard: false },
    )
  const clockNow = ({ accountId, clock }: AccountControls): Response =>
    json(200, {
      account_id: accountId,
      now: clock.now().toISOString(),
      frozen: clock.frozen,
      own: clock.own,
    })

  return [
    route('GET', 'clock', clockNow),
    route('POST', 'clock', async (account, call) => {
      moveClock(account.clock, await call.body(AnyObject))
      return clockNow(account)
    }),
    route('DELETE', 'clock', (account) => {
      account.clock.reset()
      return clockNow(account)
    }),
    route('GET', 'scenarios', (account) =>
      json(200, { scenarios: account.scenarios.list().map(scenarioView) }),
    ),
    route('POST', 'scenarios', async (account, call) => {
      const body = await call.body(ScenarioBodySchema)
      return json(201, scenarioView(queueScenario(account.scenarios, body)))
    }),
    route('DELETE', 'scenarios', (account) => {
      account.scenarios.clear()
      return new Response(null, { status: 204 })
    }),
    route('GET', 'requests', async (account, call) => {
      const limit = readLimit(call.url)
      const shared = ctx.storage?.journal
      return json(200, {
        requests: shared
          ? await shared.list({ ...limit, accountId: account.id })
          : account.journal.list(limit),
      })
    }),
    route('DELETE', 'requests', async (account) => {
      account.journal.clear()
      await ctx.storage?.journal?.clear(account.id)
      return new Response(null, { status: 204 })
    }),
  ]
}
