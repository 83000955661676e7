// The route table: the operations and the surface routes, which the router and the document are built from.
import { ACCOUNT_ROUTES } from './account.ts'
import { createCustomer } from './customers.ts'
import { DOCUMENT_ROUTE, SANDBOX_ROUTES, type SurfaceEnv } from './sandbox.ts'
import { createToken } from './tokens.ts'
import type { SurfaceRoute } from '../src/request/sandbox-api.ts'
import type { OperationSchemas } from '../src/request/context.ts'
import type { OperationDefinition } from '../src/request/define-operation.ts'
import type { Operation } from '../src/model/operations.ts'
import type { ResolvedOptions } from '../src/options.ts'

// @note Keyed by name so that the compiler holds this list and
// OPERATION_NAMES to each other: a name without its definition here, a
// definition without its name there, or one listed under another name does
// not compile.
const DEFINITIONS = { createCustomer, createToken } satisfies {
  [Name in Operation]: OperationDefinition<Name>
}

/**
 * The operations of the API, in the order of the route table and of the
 * OpenAPI document: the one list that the routes, the MSW patterns, the
 * request body schemas and the document's `paths` are built from.
 *
 * @example
 * OPERATIONS.map((spec) => `${spec.method} ${spec.path}`) // ['POST /v1/customers', 'POST /v2/tokens']
 */
export const OPERATIONS: readonly OperationDefinition[] =
  Object.values(DEFINITIONS)

/**
 * The routes of the sandbox's own surface, in the order of the route table
 * and of the OpenAPI document, each with its document entry.
 *
 * @example
 * SURFACE_ROUTES.map((route) => route.document.operationId) // ['getHealth', 'getState', …]
 */
export const SURFACE_ROUTES: readonly SurfaceRoute<SurfaceEnv>[] = [
  ...SANDBOX_ROUTES,
  ...ACCOUNT_ROUTES,
  DOCUMENT_ROUTE,
]

/**
 * The request body schema of each operation that takes a body, for one
 * sandbox's options, built once when the sandbox is made.
 *
 * @example
 * createOperationSchemas(sandbox.options).createCustomer.safeParse({ name: 'Ada', email: 'ada@example.com' })
 */
export function createOperationSchemas(
  options: ResolvedOptions,
  operations: readonly OperationDefinition<string>[] = OPERATIONS,
): OperationSchemas {
  return Object.fromEntries(
    operations.flatMap((spec) =>
      spec.body ? [[spec.operation, spec.body(options)]] : [],
    ),
  )
}
