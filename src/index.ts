export { createSandbox } from './runtimes/create-sandbox.ts'
export { resolveOptions, DEFAULT_SCOPES } from './options.ts'
export { DEFAULTS } from './defaults.ts'
export {
  ERROR_REGISTRY,
  SandboxError,
  problemJson,
  PROBLEM_TYPE_BASE,
} from './request/errors.ts'
export { LEDGER, assumptionLedger } from './assumptions.ts'
export { CustomerSchema, TokenSchema } from './model/schemas.ts'
export { createCustomerBodySchema } from '../handlers/customers.ts'
export { createTokenBodySchema } from '../handlers/tokens.ts'
export { maskSecret } from './model/secrets.ts'
export {
  DEMO_KEY_ONE,
  DEMO_KEY_TWO,
  REVOKED_KEY,
  PERSONA_RATE_LIMITED_KEY,
  PERSONA_SLOW_KEY,
  PERSONA_UNAVAILABLE_KEY,
  PERSONA_EXPIRED_TOKENS_KEY,
  PERSONA_READ_ONLY_KEY,
  DEFAULT_ACCOUNTS,
} from '../fixtures/demo-keys.ts'
export {
  PERSONAS,
  PERSONA_SLOW_MS,
  READ_ONLY_SCOPES,
} from './model/personas.ts'
export { createOpenApiDocument } from './openapi.ts'

export type {
  SandboxOptions,
  ResolvedOptions,
  RateLimitOptions,
  LatencyOptions,
} from './options.ts'
export type {
  ErrorCode,
  ErrorFormatter,
  FieldError,
  Problem,
} from './request/errors.ts'
export type { Assumption } from './assumptions.ts'
export type { SandboxCollections } from './model/db.ts'
export type { SandboxClock, ClockAfterSet } from './model/clock.ts'
export type {
  AccountClock,
  AccountControls,
  AccountScenarios,
} from './request/account-controls.ts'
export type { Journal, JournalEntry, Operation } from './request/journal.ts'
export type {
  Scenario,
  ScenarioEffect,
  ScenarioOptions,
  Scenarios,
  LatencyRange,
} from './request/scenarios.ts'
export type { Persona } from './model/personas.ts'
export type {
  Sandbox,
  SandboxCore,
  SandboxState,
  AccountView,
  ApiKeyView,
  TokenView,
  AccountFilter,
  CreatedApiKey,
  SnapshotInfo,
} from './sandbox.ts'
export type {
  Customer,
  Token,
  CustomerRecord,
  SandboxData,
  SandboxSession,
} from './model/schemas.ts'
export type { CreateCustomerBody } from '../handlers/customers.ts'
export type { CreateTokenBody } from '../handlers/tokens.ts'
export type { FixtureAccount, FixtureApiKey } from '../fixtures/demo-keys.ts'
