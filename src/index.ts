// The root export: a sandbox, its options and its errors. The documented
// keys are in `customer-token-sandbox/fixtures`; the tables the document is
// made of (error registry, assumption ledger, schemas) in `/contract`.
export { createSandbox } from './runtimes/create-sandbox.ts'
export { resolveOptions } from './options.ts'
export { SandboxError, problemJson } from './request/errors.ts'
export { maskSecret } from './model/secrets.ts'

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
