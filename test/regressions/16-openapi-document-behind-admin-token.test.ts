import { expect, it } from 'vitest'
import { startServer } from '../_servers.ts'

const ADMIN_TOKEN = 'admin-token-of-sixteen-chars'

// The admin token guards the sandbox's own API (`/__sandbox/*`); the document
// of the API is for the consumers who hold only their API keys (client
// generators, Prism), as on a server without an admin token.
it('serves GET /openapi.json without the admin token on a server that has one', async () => {
  const server = await startServer({ seed: 1, adminToken: ADMIN_TOKEN })
  const response = await fetch(`${server.url}/openapi.json`)
  expect(response.status).toBe(200)
  const document = (await response.json()) as { openapi: string }
  expect(document.openapi).toMatch(/^3\.1\./)
})

it('still asks for the admin token on /__sandbox/state of that server', async () => {
  const server = await startServer({ seed: 1, adminToken: ADMIN_TOKEN })
  expect((await fetch(`${server.url}/__sandbox/state`)).status).toBe(401)
  const allowed = await fetch(`${server.url}/__sandbox/state`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  })
  expect(allowed.status).toBe(200)
})
