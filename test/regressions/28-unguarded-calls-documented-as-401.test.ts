// With an admin token, the document listed a 401 for the two calls that never ask for it (health, the document).
import { expect, it } from 'vitest'
import { createOpenApiDocument } from '../../src/contract.ts'
import { resolveOptions } from '../../src/options.ts'
import { createSandboxCore } from '../../src/sandbox-core.ts'

const adminToken = 'an-admin-token-of-some-length'

it('documents no 401 for the health check and /openapi.json, which answer without the admin token', async () => {
  const { router } = createSandboxCore({ adminToken })
  const document = createOpenApiDocument(resolveOptions({ adminToken })) as {
    paths: Record<string, { get: { responses: Record<string, unknown> } }>
  }
  for (const path of ['/__sandbox/health', '/openapi.json']) {
    const response = await router.fetch(new Request(`http://localhost${path}`))
    expect(response.status, path).toBe(200)
    expect(
      Object.keys(document.paths[path]!.get.responses),
      path,
    ).not.toContain('401')
  }
  // A guarded call answers 401 without the token, and says so.
  const state = await router.fetch(
    new Request('http://localhost/__sandbox/state'),
  )
  expect(state.status).toBe(401)
  expect(
    Object.keys(document.paths['/__sandbox/state']!.get.responses),
  ).toContain('401')
})
