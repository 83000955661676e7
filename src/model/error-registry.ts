// The error registry: every code with its status, title, when it happens and how to trigger it.
import { ERROR_CODES, type ErrorCode } from './problems.ts'

export type { ErrorCode }

/**
 * The one error registry: every code the sandbox can answer with, its status,
 * its title (`ERROR_CODES`, which answers read), when it happens and how a
 * consumer triggers it. `docs/reference/errors.md` and the OpenAPI document
 * derive from it; only they and the contract export load it.
 *
 * @example
 * ERROR_REGISTRY.email_taken.when
 */
export const ERROR_REGISTRY = {
  not_found: {
    ...ERROR_CODES.not_found,
    when: 'A path under a version prefix (`/v<digits>/`) that the interface does not define, such as `/v2/customers`, or an unknown `/__sandbox/` path.',
    trigger: 'GET /v1/customers/cus_123',
  },
  method_not_allowed: {
    ...ERROR_CODES.method_not_allowed,
    when: 'A known path called with another method; the `Allow` header lists the methods it takes.',
    trigger: 'GET /v1/customers',
  },
  missing_credentials: {
    ...ERROR_CODES.missing_credentials,
    when: 'No `Authorization` header, or a scheme other than Bearer.',
    trigger: 'Omit the Authorization header.',
  },
  invalid_credentials: {
    ...ERROR_CODES.invalid_credentials,
    when: 'A Bearer credential that is unknown, malformed or revoked.',
    trigger: 'Authorization: Bearer sk_test_RevokedKeyForTheSandbox1',
  },
  token_expired: {
    ...ERROR_CODES.token_expired,
    when: 'A token whose `expires_at` has been reached on the sandbox clock.',
    trigger:
      'Mint a token with expires_in 60, then POST /__sandbox/clock {"advance_seconds": 60}.',
  },
  insufficient_scope: {
    ...ERROR_CODES.insufficient_scope,
    when: 'A token that lacks the scope the operation needs, or asks to mint a scope it does not hold.',
    trigger:
      'Call POST /v1/customers with a token minted for ["customers:read"].',
  },
  unsupported_media_type: {
    ...ERROR_CODES.unsupported_media_type,
    when: 'POST /v1/customers without `Content-Type: application/json`, or POST /v2/tokens with a type other than JSON or text/plain; or a compressed body (`Content-Encoding` other than identity, or on the standalone server a `Transfer-Encoding` other than chunked), which the sandbox never decodes; or a `charset` other than UTF-8.',
    trigger: 'Content-Type: application/x-www-form-urlencoded',
  },
  payload_too_large: {
    ...ERROR_CODES.payload_too_large,
    when: 'A request body over `maxBodyBytes` (1 MiB by default).',
    trigger: 'Send a body of 1 MiB and one byte.',
  },
  invalid_json: {
    ...ERROR_CODES.invalid_json,
    when: 'A body that is not UTF-8 JSON, or JSON that is not an object.',
    trigger: "Send the body '{' or '[]'.",
  },
  validation_failed: {
    ...ERROR_CODES.validation_failed,
    when: 'A field is missing, of the wrong type, out of bounds, unknown, or an `Idempotency-Key` is malformed; `errors[]` names each field.',
    trigger: 'POST /v1/customers {"name": "Ada"}',
  },
  out_of_range: {
    ...ERROR_CODES.out_of_range,
    when: 'A clock move (`POST /__sandbox/clock`) that would leave 0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z, the times an ISO-8601 date-time with a four-digit year can write.',
    trigger:
      'POST /__sandbox/clock {"now": "9999-12-31T23:00:00Z"}, then {"advance_seconds": 3600}.',
  },
  email_taken: {
    ...ERROR_CODES.email_taken,
    when: 'With `uniqueEmail` on, an email that another customer of the same account already has (compared case-insensitively).',
    trigger:
      'createSandbox({ uniqueEmail: true }), then create two customers with one email.',
  },
  limit_reached: {
    ...ERROR_CODES.limit_reached,
    when: 'A store of the sandbox is full: customers or tokens of the account (`limits.customersPerAccount`, `limits.tokensPerAccount`), records in all (`limits.records`), accounts (`limits.accounts`), queued scenarios (`limits.scenarios`, and per account `limits.scenariosPerAccount`), snapshots (`limits.snapshots`) or live idempotency keys (`idempotency.maxEntriesPerAccount`, `idempotency.maxEntries`). The detail names the limit and its option; nothing is stored. Reset the sandbox, wait for keys to expire, or raise the option.',
    trigger:
      'createSandbox({ limits: { customersPerAccount: 1 } }), then create two customers.',
  },
  idempotency_key_reused: {
    ...ERROR_CODES.idempotency_key_reused,
    when: 'An `Idempotency-Key` sent again within its window with a different body.',
    trigger: 'Send two POSTs with one Idempotency-Key and different bodies.',
  },
  idempotency_in_progress: {
    ...ERROR_CODES.idempotency_in_progress,
    when: 'An `Idempotency-Key` sent again while the first request with it is still being answered.',
    trigger:
      'Send two POSTs with one Idempotency-Key at once, the first delayed by X-Sandbox-Scenario: delay_ms=500.',
  },
  rate_limited: {
    ...ERROR_CODES.rate_limited,
    when: 'With `rateLimit` on, more requests from one credential than the window allows; `Retry-After` says when to try again.',
    trigger:
      'createSandbox({ rateLimit: { limit: 1, windowSeconds: 60 } }), then call twice.',
  },
  simulated_failure: {
    ...ERROR_CODES.simulated_failure,
    when: 'Only when a scenario asks for it: a queued scenario or the `X-Sandbox-Scenario` header (500, 503 or any other status asked for).',
    trigger: 'X-Sandbox-Scenario: status=503',
  },
  invalid_request: {
    ...ERROR_CODES.invalid_request,
    when: 'The standalone server got something that is not an HTTP request it serves: malformed headers, two `Authorization`, `Idempotency-Key`, `Content-Type` or `X-Sandbox-Scenario` headers, or a request target that is not a path (an absolute URL, `*`).',
    trigger: 'GET http://example.com/ HTTP/1.1 sent as the request line.',
  },
  invalid_host: {
    ...ERROR_CODES.invalid_host,
    when: 'The standalone server got a `Host` header that is not a host (a name, an IPv4 address or an [IPv6] address with an optional port of 0-65535), none on HTTP/1.1, or more than one.',
    trigger: 'Host: foo.123',
  },
  forbidden_origin: {
    ...ERROR_CODES.forbidden_origin,
    when: "A state-changing call to the standalone server's `/__sandbox/*` from a foreign `Origin` (not the server's own, not loopback, not in `adminOrigins`) or with `Sec-Fetch-Site: cross-site`; or full secrets asked for by a foreign origin, or by another machine without the admin token.",
    trigger: 'POST /__sandbox/reset with Origin: https://evil.example',
  },
  request_timeout: {
    ...ERROR_CODES.request_timeout,
    when: 'The standalone server did not get the whole request within `requestTimeout` (30 s by default), or its headers within `headersTimeout` (10 s); the connection is closed.',
    trigger: 'Send the headers of a POST with Content-Length: 10 and no body.',
  },
  host_not_allowed: {
    ...ERROR_CODES.host_not_allowed,
    when: '`/__sandbox/*` of a standalone server listening on loopback, with a `Host` that is not loopback nor in `allowedHosts` (DNS rebinding).',
    trigger: 'GET /__sandbox/state with Host: attacker.example',
  },
  headers_too_large: {
    ...ERROR_CODES.headers_too_large,
    when: 'More header fields than `maxHeadersCount` (100 by default), or headers over 16 KiB in all (the standalone server).',
    trigger: 'Send 101 headers.',
  },
  expectation_failed: {
    ...ERROR_CODES.expectation_failed,
    when: 'The standalone server got an `Expect` header other than `100-continue`, the one expectation HTTP/1.1 defines.',
    trigger: 'Expect: 200-ok',
  },
  storage_unavailable: {
    ...ERROR_CODES.storage_unavailable,
    when: 'Only on a server with a store: the data file could not take the write (disk full, file too large, read-only, I/O error), or its Redis store was unreachable, silent past its timeout or refused it; or, in a fleet, another replica replaced the whole state while the request was in flight, or kept writing first. The detail says whether anything may have been stored; `Retry-After` says when to try again (a keyed retry replays a write that was stored), and `GET /__sandbox/health` answers 503 `degraded` while the store is at fault.',
    trigger:
      'Start the server with --data-file on a full disk (or under `ulimit -f`), or with --store redis://… and stop Redis, then create a customer.',
  },
  internal_error: {
    ...ERROR_CODES.internal_error,
    when: 'Never by design: a bug in the sandbox. The fuzz tests look for it; report it with the request id.',
    trigger: 'None.',
  },
} as const satisfies {
  [Code in keyof typeof ERROR_CODES]: { when: string; trigger: string }
}
