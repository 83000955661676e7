import { expect, it } from 'vitest'
import type { RequestLog } from '../../src/runtimes/node.ts'
import { httpExchange } from '../_raw.ts'
import { startServer } from '../_servers.ts'

// Found by an outside tester. The request log's line of a refusal the
// journal does not record (the admin surface's 401, the edge's 400 for a
// Host that is no host) said `"code": null`, while the answer's body named
// its code: grepping the JSON log for `missing_credentials` missed every
// admin refusal. API refusals, logged from the journal, had their code.

it('logs the code of the admin surface and edge refusals, as of the API', async () => {
  const logs: RequestLog[] = []
  const server = await startServer({
    seed: 1,
    adminToken: 'abcdefghijklmnop1234',
    onLog: (log) => logs.push(log),
  })
  const admin = await fetch(`${server.url}/__sandbox/state`)
  expect(admin.status).toBe(401)
  const edge = await httpExchange(server.port, 'POST', '/v1/customers', {
    host: 'a..b',
  })
  expect(edge.status).toBe(400)
  const health = await fetch(`${server.url}/__sandbox/health`)
  expect(health.status).toBe(200)
  await expect
    .poll(() => logs.map(({ path, status, code }) => ({ path, status, code })))
    .toEqual([
      { path: '/__sandbox/state', status: 401, code: 'missing_credentials' },
      { path: '/v1/customers', status: 400, code: 'invalid_host' },
      { path: '/__sandbox/health', status: 200, code: null },
    ])
})
