import { expect, it } from 'vitest'
import { startServer } from '../_servers.ts'

// A CORS preflight answered `GET, POST, DELETE, OPTIONS` for any path: a
// browser app was told it could DELETE /v1/customers, then got a 405.

const preflight = (url: string, method: string) =>
  fetch(url, {
    method: 'OPTIONS',
    headers: {
      origin: 'http://localhost:5173',
      'access-control-request-method': method,
    },
  })

it('advertises in a preflight the methods the path takes', async () => {
  const server = await startServer({ seed: 1 })
  for (const [path, methods] of [
    ['/v1/customers', 'POST, OPTIONS'],
    ['/v2/tokens', 'POST, OPTIONS'],
    ['/__sandbox/scenarios', 'GET, HEAD, POST, DELETE, OPTIONS'],
    ['/__sandbox/state', 'GET, HEAD, OPTIONS'],
  ] as const) {
    const answer = await preflight(`${server.url}${path}`, 'DELETE')
    expect(answer.status, path).toBe(204)
    expect(answer.headers.get('access-control-allow-methods'), path).toBe(
      methods,
    )
  }
  // Elsewhere the server serves files only.
  const file = await preflight(`${server.url}/index.html`, 'GET')
  expect(file.headers.get('access-control-allow-methods')).toBe(
    'GET, HEAD, OPTIONS',
  )
})
