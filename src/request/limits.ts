// The store limits (records, accounts, scenarios, …) and the 409 that says which one was reached.
import type { Database } from '../model/db.ts'
import { SandboxError } from './errors.ts'
import type { ResolvedOptions } from '../options.ts'
import { LimitReachedError, limitHint } from '../model/limit-reached.ts'

export { LimitReachedError, limitHint }

/**
 * The `409 limit_reached` problem for a full store, naming the limit and its
 * option.
 *
 * @example
 * throw limitReached(new LimitReachedError('limits.scenarios', '…'))
 */
export function limitReached(error: LimitReachedError): SandboxError {
  return new SandboxError('limit_reached', error.message)
}

/**
 * Checks that one more record of `kind` fits every limit that bounds it, or
 * throws a `LimitReachedError` that names the limit and its option. Nothing
 * is awaited between this check and the insert it guards.
 *
 * @example
 * checkRoom(ctx.db, ctx.options, 'customer', principal.accountId)
 */
export function checkRoom(
  db: Database,
  options: ResolvedOptions,
  kind: 'customer' | 'token' | 'account',
  accountId?: string,
  pending = 0,
): void {
  const { limits } = options
  const reset = 'Reset the sandbox (POST /__sandbox/reset or sandbox.reset())'
  if (kind === 'account') {
    const accounts = db.accountCount() + pending
    if (accounts >= limits.accounts) {
      throw new LimitReachedError(
        'limits.accounts',
        `The sandbox holds ${accounts} accounts, the most that limits.accounts (${limits.accounts}) allows; no account was made. ${limitHint('limits.accounts', reset)}`,
      )
    }
  } else {
    const option =
      kind === 'customer'
        ? 'limits.customersPerAccount'
        : 'limits.tokensPerAccount'
    const max =
      kind === 'customer' ? limits.customersPerAccount : limits.tokensPerAccount
    const held =
      kind === 'customer'
        ? db.customersOf(accountId!).length
        : db.tokensOf(accountId!).length
    if (held >= max) {
      throw new LimitReachedError(
        option,
        `This account holds ${held} ${kind}s, the most that ${option} (${max}) allows; nothing was stored. ${limitHint(option, reset)}`,
      )
    }
  }
  // An account comes with its API key: two records.
  const adding = kind === 'account' ? 2 : 1
  const records = db.recordCount() + pending * 2
  if (records + adding > limits.records) {
    throw new LimitReachedError(
      'limits.records',
      `The sandbox holds ${records} records (accounts, API keys, customers and tokens), the most that limits.records (${limits.records}) allows; nothing was stored. ${limitHint('limits.records', reset)}`,
    )
  }
}
