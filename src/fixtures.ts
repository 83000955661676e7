// The `customer-token-sandbox/fixtures` export: the documented keys,
// accounts and personas every sandbox starts with. They never change
// between releases, so tests and examples may hard-code them.
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

export type { FixtureAccount, FixtureApiKey } from '../fixtures/demo-keys.ts'
export type { Persona } from './model/personas.ts'
