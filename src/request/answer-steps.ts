// What every call may answer besides its own errors, by the steps it passes
// through: only the document reads it, so pages that never ask for the
// document never load it.
import type { AnswerHeader, ErrorCode, Throws } from './errors.ts'
import type { SurfaceRoute } from './sandbox-api.ts'

/**
 * What the standalone server's edge answers before a request reaches its
 * route, whatever the route (`node-edge.ts`, `node.ts`, `edge.ts`): a
 * request node:http cannot read or that did not arrive in time, a bad or
 * second `Host`, a repeated header, a transfer coding, an `Expect` it cannot
 * meet, too many headers. The document lists them under every call, so that
 * a validating proxy or a generated client expects them.
 *
 * @example
 * Object.keys(SERVER_EDGE_THROWS) // ['invalid_request', 'invalid_host', …]
 */
export const SERVER_EDGE_THROWS: Throws = {
  invalid_request: [],
  invalid_host: [],
  request_timeout: [],
  unsupported_media_type: ['Accept-Encoding'],
  expectation_failed: [],
  headers_too_large: [],
}

/** What one step every surface call passes through can answer with. */
export interface SurfaceStep {
  step: string
  /** The guard of the routes it runs for; every route when absent. */
  guard?: SurfaceRoute['guard']
  /** Runs only when the sandbox has an admin token. */
  adminToken?: true
  /** Runs only for calls that take a body. */
  body?: true
  /** Runs for every call but the public ones (health, the document). */
  stored?: true
  throws: Throws
}

/**
 * The steps of a surface call, each with the codes it can answer with: the
 * document derives every surface call's error answers from these and the
 * call's own `throws`. Listed in the order the document names the codes;
 * the standalone server's edge checks run first.
 *
 * @example
 * SURFACE_STEPS.find((step) => step.step === 'admin token')?.throws // { missing_credentials: […], … }
 */
export const SURFACE_STEPS: readonly SurfaceStep[] = [
  {
    step: 'admin token',
    guard: 'admin',
    adminToken: true,
    throws: {
      missing_credentials: ['WWW-Authenticate'],
      invalid_credentials: ['WWW-Authenticate'],
    },
  },
  {
    // accountOf in handlers/account.ts: one of the account's API keys.
    step: 'account key',
    guard: 'account',
    throws: {
      missing_credentials: ['WWW-Authenticate'],
      invalid_credentials: ['WWW-Authenticate'],
      insufficient_scope: ['WWW-Authenticate'],
    },
  },
  { step: 'body', throws: { invalid_json: [], validation_failed: [] } },
  {
    // readBody in validation.ts: the size and encoding any body is held to.
    step: 'body read',
    body: true,
    throws: {
      payload_too_large: [],
      // A compressed body, or a charset other than UTF-8.
      unsupported_media_type: ['Accept-Encoding', 'Accept-Post'],
    },
  },
  {
    // A store that refuses a change, or that a fleet's replica cannot
    // read (runSandboxCall, the router): the answers of a server with one.
    step: 'store',
    stored: true,
    throws: { storage_unavailable: ['Retry-After'] },
  },
  {
    // The standalone server's edge (issue 14): foreign origins, rebinding,
    // and what it refuses on any route.
    step: 'edge',
    throws: {
      forbidden_origin: [],
      host_not_allowed: [],
      ...SERVER_EDGE_THROWS,
    },
  },
]

/** What one step of `runOperation` can answer with, for the document. */
export interface PipelineStep {
  /** The check, as the contract's order names it. */
  step: string
  throws: Throws
  /** Headers that every answer from this step on carries. */
  sets?: readonly AnswerHeader[]
  /** A code it answers with at whatever status it is asked for. */
  anyStatus?: ErrorCode
  /** Runs only for an operation that takes a body. */
  body?: true
}

/**
 * The steps of `runOperation` in their order, each with the codes it can
 * answer with: the OpenAPI document derives every operation's error answers
 * from these and the operation's own `throws`, so a step of `runOperation`
 * (pipeline.ts) that learns a new code says so here.
 *
 * @example
 * PIPELINE_STEPS.flatMap((step) => Object.keys(step.throws)) // ['missing_credentials', …]
 */
export const PIPELINE_STEPS: readonly PipelineStep[] = [
  {
    step: 'authentication',
    throws: {
      missing_credentials: ['WWW-Authenticate'],
      invalid_credentials: ['WWW-Authenticate'],
      token_expired: ['WWW-Authenticate'],
    },
  },
  {
    // A malformed X-Sandbox-Scenario, or a take that cannot be stored.
    step: 'scenario',
    throws: { validation_failed: [], storage_unavailable: ['Retry-After'] },
    anyStatus: 'simulated_failure',
  },
  {
    step: 'rate limit',
    throws: { rate_limited: ['Retry-After'] },
    sets: ['RateLimit', 'RateLimit-Policy'],
  },
  { step: 'scope', throws: { insufficient_scope: ['WWW-Authenticate'] } },
  {
    step: 'content type',
    throws: { unsupported_media_type: ['Accept-Post'] },
    body: true,
  },
  { step: 'size', throws: { payload_too_large: [] }, body: true },
  { step: 'JSON', throws: { invalid_json: [] }, body: true },
  {
    step: 'idempotency',
    throws: {
      validation_failed: [],
      idempotency_in_progress: ['Retry-After'],
      limit_reached: [],
      idempotency_key_reused: [],
    },
    body: true,
  },
  { step: 'fields', throws: { validation_failed: [] } },
  {
    // A full store (checkRoom), a write that failed or kept losing.
    step: 'store',
    throws: { limit_reached: [], storage_unavailable: ['Retry-After'] },
  },
]
