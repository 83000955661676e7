// The OpenAPI document of the sandbox's own route table, for the contract export and the scripts.
import { documentRouteTable } from './openapi.ts'
import { OPERATIONS, SURFACE_ROUTES } from './index.ts'
import type { ResolvedOptions } from '../src/options.ts'

type JsonObject = Record<string, unknown>

/**
 * The OpenAPI 3.1 document of exactly what one sandbox answers, generated
 * from the zod schemas its handlers validate with and the options in force.
 *
 * @example
 * const document = createOpenApiDocument(sandbox.options)
 * document.paths['/v1/customers'].post.requestBody
 */
export function createOpenApiDocument(
  options: ResolvedOptions,
  version = '0.0.0',
): JsonObject {
  return documentRouteTable(options, version, {
    operations: OPERATIONS,
    routes: SURFACE_ROUTES,
  })
}
