// The sandbox's error codes and how a problem is rendered (RFC 9457), below
// everything that throws or configures them.
// srvx's FastResponse is the platform's Response, or on Node a lazy one
// that the server writes without building a web stream.
import { FastResponse } from 'srvx'

/**
 * The one error registry: every code the sandbox can answer with, its status,
 * its title, when it happens and how a consumer triggers it.
 * `docs/reference/errors.md` and the OpenAPI document derive from it.
 */
export const ERROR_REGISTRY = {
  not_found: {
    status: 404,
    title: 'Not found',
    when: 'A path under a version prefix (`/v<digits>/`) that the interface does not define, such as `/v2/customers`, or an unknown `/__sandbox/` path.',
    trigger: 'GET /v1/customers/cus_123',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    when: 'A known path called with another method; the `Allow` header lists the methods it takes.',
    trigger: 'GET /v1/customers',
  },
  missing_credentials: {
    status: 401,
    title: 'Missing credentials',
    when: 'No `Authorization` header, or a scheme other than Bearer.',
    trigger: 'Omit the Authorization header.',
  },
  invalid_credentials: {
    status: 401,
    title: 'Invalid credentials',
    when: 'A Bearer credential that is unknown, malformed or revoked.',
    trigger: 'Authorization: Bearer sk_test_RevokedKeyForTheSandbox1',
  },
  token_expired: {
    status: 401,
    title: 'Token expired',
    when: 'A token whose `expires_at` has been reached on the sandbox clock.',
    trigger:
      'Mint a token with expires_in 60, then POST /__sandbox/clock {"advance_seconds": 60}.',
  },
  insufficient_scope: {
    status: 403,
    title: 'Insufficient scope',
    when: 'A token that lacks the scope the operation needs, or asks to mint a scope it does not hold.',
    trigger:
      'Call POST /v1/customers with a token minted for ["customers:read"].',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    when: 'POST /v1/customers without `Content-Type: application/json`, or POST /v2/tokens with a type other than JSON or text/plain; or a compressed body (`Content-Encoding` other than identity), which the sandbox never decodes.',
    trigger: 'Content-Type: application/x-www-form-urlencoded',
  },
  payload_too_large: {
    status: 413,
    title: 'Payload too large',
    when: 'A request body over `maxBodyBytes` (1 MiB by default).',
    trigger: 'Send a body of 1 MiB and one byte.',
  },
  invalid_json: {
    status: 400,
    title: 'Invalid JSON',
    when: 'A body that is not UTF-8 JSON, or JSON that is not an object.',
    trigger: "Send the body '{' or '[]'.",
  },
  validation_failed: {
    status: 422,
    title: 'Validation failed',
    when: 'A field is missing, of the wrong type, out of bounds, unknown, or an `Idempotency-Key` is malformed; `errors[]` names each field.',
    trigger: 'POST /v1/customers {"name": "Ada"}',
  },
  out_of_range: {
    status: 422,
    title: 'Out of range',
    when: 'A clock move (`POST /__sandbox/clock`) that would leave 0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z, the times an ISO-8601 date-time with a four-digit year can write.',
    trigger:
      'POST /__sandbox/clock {"now": "9999-12-31T23:00:00Z"}, then {"advance_seconds": 3600}.',
  },
  email_taken: {
    status: 409,
    title: 'Email taken',
    when: 'With `uniqueEmail` on, an email that another customer of the same account already has (compared case-insensitively).',
    trigger:
      'createSandbox({ uniqueEmail: true }), then create two customers with one email.',
  },
  limit_reached: {
    status: 409,
    title: 'Limit reached',
    when: 'A store of the sandbox is full: customers or tokens of the account (`limits.customersPerAccount`, `limits.tokensPerAccount`), records in all (`limits.records`), accounts (`limits.accounts`), queued scenarios (`limits.scenarios`, and per account `limits.scenariosPerAccount`), snapshots (`limits.snapshots`) or live idempotency keys (`idempotency.maxEntriesPerAccount`, `idempotency.maxEntries`). The detail names the limit and its option; nothing is stored. Reset the sandbox, wait for keys to expire, or raise the option.',
    trigger:
      'createSandbox({ limits: { customersPerAccount: 1 } }), then create two customers.',
  },
  idempotency_key_reused: {
    status: 422,
    title: 'Idempotency key reused',
    when: 'An `Idempotency-Key` sent again within its window with a different body.',
    trigger: 'Send two POSTs with one Idempotency-Key and different bodies.',
  },
  idempotency_in_progress: {
    status: 409,
    title: 'Idempotency key in progress',
    when: 'An `Idempotency-Key` sent again while the first request with it is still being answered.',
    trigger:
      'Send two POSTs with one Idempotency-Key at once, the first delayed by X-Sandbox-Scenario: delay_ms=500.',
  },
  rate_limited: {
    status: 429,
    title: 'Too many requests',
    when: 'With `rateLimit` on, more requests from one credential than the window allows; `Retry-After` says when to try again.',
    trigger:
      'createSandbox({ rateLimit: { limit: 1, windowSeconds: 60 } }), then call twice.',
  },
  simulated_failure: {
    status: 503,
    title: 'Simulated failure',
    when: 'Only when a scenario asks for it: a queued scenario or the `X-Sandbox-Scenario` header (500, 503 or any other status asked for).',
    trigger: 'X-Sandbox-Scenario: status=503',
  },
  invalid_request: {
    status: 400,
    title: 'Invalid request',
    when: 'The standalone server got something that is not an HTTP request it serves: malformed headers, or a request target that is not a path (an absolute URL, `*`).',
    trigger: 'GET http://example.com/ HTTP/1.1 sent as the request line.',
  },
  invalid_host: {
    status: 400,
    title: 'Invalid host',
    when: 'The standalone server got a `Host` header that is not a host (a name, an IPv4 address or an [IPv6] address with an optional port of 0-65535), none on HTTP/1.1, or more than one.',
    trigger: 'Host: foo.123',
  },
  forbidden_origin: {
    status: 403,
    title: 'Forbidden origin',
    when: "A state-changing call to the standalone server's `/__sandbox/*` from a foreign `Origin` (not the server's own, not loopback, not in `adminOrigins`) or with `Sec-Fetch-Site: cross-site`; or full secrets asked for by a foreign origin, or by another machine without the admin token.",
    trigger: 'POST /__sandbox/reset with Origin: https://evil.example',
  },
  request_timeout: {
    status: 408,
    title: 'Request timeout',
    when: 'The standalone server did not get the whole request within `requestTimeout` (30 s by default), or its headers within `headersTimeout` (10 s); the connection is closed.',
    trigger: 'Send the headers of a POST with Content-Length: 10 and no body.',
  },
  host_not_allowed: {
    status: 421,
    title: 'Host not allowed',
    when: '`/__sandbox/*` of a standalone server listening on loopback, with a `Host` that is not loopback nor in `allowedHosts` (DNS rebinding).',
    trigger: 'GET /__sandbox/state with Host: attacker.example',
  },
  headers_too_large: {
    status: 431,
    title: 'Request header fields too large',
    when: 'More header fields than `maxHeadersCount` (100 by default), or headers over 16 KiB in all (the standalone server).',
    trigger: 'Send 101 headers.',
  },
  storage_unavailable: {
    status: 503,
    title: 'Storage unavailable',
    when: 'Only on a server with `--data-file`: the write could not be stored (disk full, file too large, read-only, I/O error), so nothing was created; `Retry-After` says when to try again and `GET /__sandbox/health` answers 503 `degraded` until a write succeeds.',
    trigger:
      'Start the server with --data-file on a full disk (or under `ulimit -f`), then create a customer.',
  },
  internal_error: {
    status: 500,
    title: 'Internal error',
    when: 'Never by design: a bug in the sandbox. The fuzz tests look for it; report it with the request id.',
    trigger: 'None.',
  },
} as const satisfies Record<
  string,
  { status: number; title: string; when: string; trigger: string }
>

/** A code of the error registry. */
export type ErrorCode = keyof typeof ERROR_REGISTRY

/** One problem with one field of a request. */
export interface FieldError {
  /** The top-level field (or header) at fault. */
  field: string
  /** RFC 6901 pointer into the request body, for nested problems. */
  pointer?: string
  code: string
  message: string
}

/** An RFC 9457 problem details object as the sandbox renders it. */
export interface Problem {
  type: string
  title: string
  status: number
  detail: string
  code: ErrorCode
  request_id: string
  errors?: FieldError[]
  /** How many field errors past the first `MAX_FIELD_ERRORS` were left out of `errors`. */
  errors_omitted?: number
}

/**
 * Renders a problem as a Response. Swap it through the `errorFormat` option to
 * imitate your real API's error shape.
 *
 * @example
 * createSandbox({
 *   errorFormat: (problem) =>
 *     Response.json({ error: { code: problem.code, message: problem.detail } }, { status: problem.status }),
 * })
 */
export type ErrorFormatter = (problem: Problem) => Response

/** Reason phrases of the statuses the sandbox answers with (HTTP/1.1 status lines). */
export const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: 'OK',
  201: 'Created',
  204: 'No Content',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  421: 'Misdirected Request',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
}

/** The base of the `type` URI of every problem. */
export const PROBLEM_TYPE_BASE = 'https://customer-token-sandbox.dev/problems/'

/**
 * The default error format: RFC 9457 problem JSON.
 *
 * @example
 * const response = problemJson(problem) // Content-Type: application/problem+json
 */
export const problemJson: ErrorFormatter = (problem) =>
  new FastResponse(JSON.stringify(problem), {
    status: problem.status,
    statusText: STATUS_TEXT[problem.status] ?? '',
    headers: { 'content-type': 'application/problem+json' },
  })
