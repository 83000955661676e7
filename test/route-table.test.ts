// The document is the route table's: every route has its entry under its path and method, and its words, and nothing else does.
import { expect, it } from 'vitest'
import { createOpenApiDocument } from '../src/contract.ts'
import { resolveOptions } from '../src/options.ts'
import { createSandboxCore } from '../src/sandbox-core.ts'
import type { SurfaceProse } from '../src/request/sandbox-api.ts'
import { SURFACE_ROUTES } from '../handlers/index.ts'
import { ACCOUNT_PROSE } from '../handlers/account.docs.ts'
import { SANDBOX_PROSE } from '../handlers/sandbox.docs.ts'

const METHODS = ['get', 'post', 'put', 'patch', 'delete']

it('documents each route of the table once, under its path and method, in the order of the table', () => {
  const { router } = createSandboxCore()
  const routes = router.routes.map(
    (route) =>
      `${route.method.toLowerCase()} ${route.path.replace(/:(\w+)/g, '{$1}')}`,
  )
  const document = createOpenApiDocument(resolveOptions()) as {
    paths: Record<string, Record<string, unknown>>
  }
  const documented = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((method) => METHODS.includes(method))
      .map((method) => `${method} ${path}`),
  )
  expect(new Set(routes).size).toBe(routes.length)
  expect(documented).toEqual(routes)
})

it('has the words of every surface route, and of each answer it declares, and no words without a route', () => {
  const prose: Record<string, SurfaceProse> = {
    ...SANDBOX_PROSE,
    ...ACCOUNT_PROSE,
  }
  const ids = SURFACE_ROUTES.map(({ document }) => document.operationId)
  expect(Object.keys(prose).toSorted()).toEqual(ids.toSorted())
  for (const { document } of SURFACE_ROUTES) {
    expect(Object.keys(prose[document.operationId]!.answers)).toEqual(
      Object.keys(document.answers),
    )
  }
})
