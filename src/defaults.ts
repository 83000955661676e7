// Every default and bound of the options, in one table.
/**
 * Every default and bound of the sandbox's options, in one place: read by
 * `resolveOptions`, the assumption ledger, the CLI's `--help` and the reference
 * pages generated from them (docs/reference/). Change a default here and nowhere else.
 *
 * @example
 * import { DEFAULTS } from 'customer-token-sandbox/contract'
 * DEFAULTS.expiresIn // { default: 3600, min: 60, max: 86400 }
 */
export const DEFAULTS = {
  seed: 1,
  deterministic: true,
  customersPerAccount: 25,
  unknownFields: 'reject',
  requiredFields: ['name', 'email'],
  nameLength: { min: 1, max: 200 },
  emailMaxLength: 254,
  uniqueEmail: false,
  scopes: ['customers:read', 'customers:write', 'tokens:write'],
  maxScopes: 20,
  expiresIn: { default: 3600, min: 60, max: 86_400 },
  v1AcceptsTokens: true,
  tokenIssuers: 'api-keys-and-tokens',
  rateLimit: false,
  latency: false,
  maxBodyBytes: 1_048_576,
  clockAfterSet: 'frozen',
  idempotency: {
    ttlSeconds: 86_400,
    maxEntries: 50_000,
    maxEntriesPerAccount: 1_000,
  },
  // `records` bounds the heap; docs/operations/limits.md says what a
  // record costs.
  limits: {
    customersPerAccount: 10_000,
    tokensPerAccount: 10_000,
    records: 300_000,
    accounts: 10_000,
    scenarios: 1_000,
    scenariosPerAccount: 100,
    snapshots: 10,
  },
  journalLimit: 1000,
} as const

/** The longest delay, in milliseconds, a scenario or the latency option may add. */
export const MAX_DELAY_MS = 60_000

/**
 * The highest `maxBodyBytes` (256 MiB). A body is read as one string, and a
 * JavaScript engine makes none longer than its own bound: 2^29 - 24 UTF-16
 * units in 64-bit V8 (Node, Chrome), more in Firefox and Safari. A UTF-8
 * body of N bytes decodes to at most N units, so a body within this ceiling
 * fits; in a runtime whose bound is lower still, a body it cannot make a
 * string of is `413 payload_too_large` (src/request/validation.ts).
 */
export const MAX_BODY_BYTES = 268_435_456

/**
 * The defaults of the standalone server's own options (`createSandboxServer`
 * and the CLI), beside the sandbox's in `DEFAULTS`: `--help` reads them. The
 * server draws ids and secrets from Web Crypto, so `deterministic` is off.
 *
 * @example
 * SERVER_DEFAULTS.port // 4100
 */
export const SERVER_DEFAULTS = {
  port: 4100,
  host: '127.0.0.1',
  deterministic: false,
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  keepAliveTimeout: 5_000,
  // docs/operations/reliability.md (the server's edge) says why a minute.
  sendTimeout: 60_000,
  maxHeadersCount: 100,
  maxConnections: 1024,
} as const
