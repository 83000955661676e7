// Authentication and scopes: which credential a request carries, and what it may do.
import type { Database } from '../model/db.ts'
import { SandboxError } from './errors.ts'
import { READ_ONLY_SCOPES, type Persona } from '../model/personas.ts'
import {
  BEARER_CREDENTIAL,
  constantTimeEqual,
  maskSecret,
} from '../model/secrets.ts'

/** The realm of every `WWW-Authenticate` challenge. */
export const REALM = 'sandbox'

/** Who is calling: an API key (every scope) or a token (its own scopes, until it expires). */
export interface Principal {
  kind: 'api-key' | 'token'
  /** The id of the key or token record. */
  id: string
  accountId: string
  /** `'all'` for API keys. */
  scopes: readonly string[] | 'all'
  /** Epoch ms, for tokens. */
  expiresAt: number | undefined
  /** The credential in masked form. */
  masked: string
  /** The raw credential, for rate limiting; never logged. */
  secret: string
  /** How a persona key behaves, if it is one. */
  persona: Persona | undefined
}

// RFC 7235 token for the scheme; the credential is BEARER_CREDENTIAL.
const AUTHORIZATION = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)(?: +(.*))?$/

const challenge = (params = ''): Record<string, string> => ({
  'www-authenticate': `Bearer realm="${REALM}"${params}`,
})

/** The result of reading the `Authorization` header before the lookup. */
export type BearerResult =
  | { kind: 'missing' }
  | { kind: 'malformed'; masked: string }
  | { kind: 'bearer'; credential: string; masked: string }

/**
 * Reads a Bearer credential (RFC 6750): the scheme is case-insensitive and one
 * or more spaces separate it from the credential.
 *
 * @example
 * readBearer('bearer   sk_test_DemoKeyForTheSandbox0001') // { kind: 'bearer', credential: 'sk_test_…' }
 */
export function readBearer(header: string | null): BearerResult {
  if (header === null) return { kind: 'missing' }
  const match = AUTHORIZATION.exec(header.trim())
  if (!match || match[1]!.toLowerCase() !== 'bearer') return { kind: 'missing' }
  const credential = match[2] ?? ''
  if (!BEARER_CREDENTIAL.test(credential)) {
    return { kind: 'malformed', masked: maskSecret(credential) }
  }
  return { kind: 'bearer', credential, masked: maskSecret(credential) }
}

/**
 * Authenticates a request's Bearer credential (as `readBearer` read it)
 * against the data model: O(1) through the index of secrets' digests, then a
 * constant-time comparison. Throws the 401s of the contract's auth table.
 * `now` may be a lookup by account, for accounts with a clock of their own.
 *
 * @example
 * const bearer = readBearer(request.headers.get('authorization'))
 * const principal = authenticate(db, bearer, Date.now())
 */
export function authenticate(
  db: Database,
  bearer: BearerResult,
  now: number | ((accountId: string) => number),
): Principal {
  if (bearer.kind === 'missing') {
    throw new SandboxError(
      'missing_credentials',
      'Send an API key or a token as "Authorization: Bearer <credential>".',
      { headers: challenge() },
    )
  }
  if (bearer.kind === 'malformed') {
    throw invalid('The Bearer credential is empty or malformed.')
  }

  let found: Principal | undefined
  let revoked = false
  // @note Compare against every candidate, never stopping early, so the time
  // taken does not tell which one matched.
  for (const candidate of db.credentialsByHash(bearer.credential) ?? []) {
    if (!constantTimeEqual(candidate.record.secret, bearer.credential)) continue
    if (candidate.kind === 'api-key') {
      revoked = candidate.record.revoked
      found = {
        kind: 'api-key',
        id: candidate.record.id,
        accountId: candidate.record.account_id,
        scopes:
          candidate.record.persona === 'read-only' ? READ_ONLY_SCOPES : 'all',
        expiresAt: undefined,
        masked: bearer.masked,
        secret: bearer.credential,
        persona: candidate.record.persona,
      }
    } else {
      found = {
        kind: 'token',
        id: candidate.record.id,
        accountId: candidate.record.account_id,
        scopes: candidate.record.scopes,
        expiresAt: Date.parse(candidate.record.expires_at),
        masked: bearer.masked,
        secret: bearer.credential,
        persona: undefined,
      }
    }
  }
  if (!found) throw invalid('The credential is not a known API key or token.')
  if (revoked) throw invalid('The API key has been revoked.')
  if (
    found.expiresAt !== undefined &&
    (typeof now === 'number' ? now : now(found.accountId)) >= found.expiresAt
  ) {
    throw new SandboxError(
      'token_expired',
      `The token expired at ${new Date(found.expiresAt).toISOString()}; mint a new one with POST /v2/tokens.`,
      {
        headers: challenge(
          ', error="invalid_token", error_description="The access token expired"',
        ),
      },
    )
  }
  return found
}

const invalid = (detail: string): SandboxError =>
  new SandboxError('invalid_credentials', detail, {
    headers: challenge(', error="invalid_token"'),
  })

/** Whether a principal holds `scope`. */
export function hasScope(principal: Principal, scope: string): boolean {
  return principal.scopes === 'all' || principal.scopes.includes(scope)
}

/**
 * Throws `403 insufficient_scope` (RFC 6750) naming the scope that is missing.
 *
 * @example
 * requireScope(principal, 'customers:write')
 */
export function requireScope(
  principal: Principal,
  scope: string,
  detail = `This call needs the scope "${scope}", which the ${principal.kind === 'token' ? 'token' : 'API key'} does not carry.`,
): void {
  if (hasScope(principal, scope)) return
  throw new SandboxError('insufficient_scope', detail, {
    headers: challenge(`, error="insufficient_scope", scope="${scope}"`),
  })
}
