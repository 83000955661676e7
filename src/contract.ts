// The `customer-token-sandbox/contract` export: the tables the sandbox's
// behaviour and its OpenAPI document are made of (error registry,
// assumption ledger, defaults, zod schemas), for tools that check a real
// service or a client against them.
export { DEFAULTS } from './defaults.ts'
export { DEFAULT_SCOPES } from './options.ts'
export { PROBLEM_TYPE_BASE } from './request/errors.ts'
export { ERROR_REGISTRY } from './model/error-registry.ts'
export { LEDGER, assumptionLedger } from './assumptions.ts'
export { CustomerSchema, TokenSchema } from './model/schemas.ts'
export { createCustomerBodySchema } from '../handlers/customers.ts'
export { createTokenBodySchema } from '../handlers/tokens.ts'
export { createOpenApiDocument } from '../handlers/document.ts'

export type { Assumption } from './assumptions.ts'
