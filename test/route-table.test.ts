// The document is the route table's: every route has its entry under its path and method, and nothing else does.
import { expect, it } from 'vitest'
import { createOpenApiDocument } from '../src/contract.ts'
import { resolveOptions } from '../src/options.ts'
import { createSandboxCore } from '../src/sandbox-core.ts'

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
