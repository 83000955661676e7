// The sandbox's error codes and how a problem is rendered (RFC 9457), below
// everything that throws or configures them.
import { FastResponse } from 'srvx'

/**
 * The class the sandbox's answers are built with: srvx's FastResponse (the
 * platform's Response, or on Node a lazy one that the server writes
 * without building a web stream), unless the global Response is not the
 * class it builds on: in a DOM emulation (Vitest's happy-dom), whose
 * Response derives from a base that cannot be built alone, every answer
 * failed to be built and every request hung. Then the global Response.
 *
 * @example
 * new Answer('{}', { status: 200, headers: { 'content-type': 'application/json' } })
 */
export const Answer: typeof Response =
  (globalThis as Record<symbol, unknown>)[Symbol.for('srvx.nativeResponse')] ===
  Response
    ? FastResponse
    : Response
/**
 * Every code the sandbox can answer with, its status and its title: what
 * an answer needs. What each means and how to trigger it are in
 * `ERROR_REGISTRY` (`src/model/error-registry.ts`), which the document and
 * the docs read, so that a page does not load them.
 */
export const ERROR_CODES = {
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  missing_credentials: { status: 401, title: 'Missing credentials' },
  invalid_credentials: { status: 401, title: 'Invalid credentials' },
  token_expired: { status: 401, title: 'Token expired' },
  insufficient_scope: { status: 403, title: 'Insufficient scope' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  invalid_json: { status: 400, title: 'Invalid JSON' },
  validation_failed: { status: 422, title: 'Validation failed' },
  out_of_range: { status: 422, title: 'Out of range' },
  email_taken: { status: 409, title: 'Email taken' },
  limit_reached: { status: 409, title: 'Limit reached' },
  idempotency_key_reused: { status: 422, title: 'Idempotency key reused' },
  idempotency_in_progress: {
    status: 409,
    title: 'Idempotency key in progress',
  },
  rate_limited: { status: 429, title: 'Too many requests' },
  simulated_failure: { status: 503, title: 'Simulated failure' },
  invalid_request: { status: 400, title: 'Invalid request' },
  invalid_host: { status: 400, title: 'Invalid host' },
  forbidden_origin: { status: 403, title: 'Forbidden origin' },
  request_timeout: { status: 408, title: 'Request timeout' },
  host_not_allowed: { status: 421, title: 'Host not allowed' },
  headers_too_large: { status: 431, title: 'Request header fields too large' },
  expectation_failed: { status: 417, title: 'Expectation failed' },
  storage_unavailable: { status: 503, title: 'Storage unavailable' },
  internal_error: { status: 500, title: 'Internal error' },
} as const satisfies Record<string, { status: number; title: string }>

/** A code the sandbox answers with (each one in `ERROR_REGISTRY` too, which says more of it). */
export type ErrorCode = keyof typeof ERROR_CODES

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
  417: 'Expectation Failed',
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
  new Answer(JSON.stringify(problem), {
    status: problem.status,
    statusText: STATUS_TEXT[problem.status] ?? '',
    headers: { 'content-type': 'application/problem+json' },
  })
