// The persona keys: documented credentials that always behave one way (slow, rate-limited, …).
/**
 * How a persona key behaves on every call, so that a consumer with no way to
 * add headers (any SDK) can reach each unhappy path:
 * - `rate-limited`: one call per minute of sandbox time, then `429 rate_limited`;
 * - `slow`: every answer takes `PERSONA_SLOW_MS`;
 * - `unavailable`: every call is `503 simulated_failure` with `Retry-After`;
 * - `expired-tokens`: the tokens it mints are already expired;
 * - `read-only`: it, and the tokens it mints, lack `customers:write`.
 */
export type Persona = (typeof PERSONAS)[number]

/** Every persona, as keys in `fixtures/` carry them. */
export const PERSONAS = [
  'rate-limited',
  'slow',
  'unavailable',
  'expired-tokens',
  'read-only',
] as const

/** How long every answer to the `slow` persona takes, in milliseconds. */
export const PERSONA_SLOW_MS = 2000

/** The scopes of the `read-only` persona. */
export const READ_ONLY_SCOPES: readonly string[] = [
  'customers:read',
  'tokens:write',
]

/** Requests the `rate-limited` persona may make per window. */
export const PERSONA_RATE_LIMIT = { limit: 1, windowSeconds: 60 } as const
