import { request } from 'node:http'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import type { RequestLog } from '../../src/runtimes/node.ts'
import { startServer } from '../_servers.ts'

/** A POST whose connection the server drops: resolves when it is gone. */
const dropped = (port: number) =>
  new Promise<void>((resolve, reject) => {
    const req = request(
      {
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/v1/customers',
        agent: false,
        headers: {
          authorization: `Bearer ${DEMO_KEY_ONE}`,
          'content-type': 'application/json',
        },
      },
      () => reject(new Error('answered, but a network error was asked for')),
    )
    req.on('error', () => resolve())
    req.end('{"name":"Ada","email":"ada@example.com"}')
  })

it('logs each network_error request once as it happens, keeping nothing per request for onLog', async () => {
  const logs: RequestLog[] = []
  const server = await startServer({
    seed: 1,
    onLog: (log) => logs.push(log),
  })
  const count = 300
  server.sandbox.scenarios.next('createCustomer', {
    networkError: true,
    times: count,
  })
  for (let i = 0; i < count; i++) await dropped(server.port)
  expect(logs).toHaveLength(count)
  expect(new Set(logs.map((log) => log.request_id)).size).toBe(count)
  for (const log of logs) {
    expect(log).toMatchObject({
      method: 'POST',
      path: '/v1/customers',
      status: 0,
      account_id: 'acct_DemoAccount001',
    })
  }
  // The server keeps answering, and logs what comes next in order.
  const answer = await fetch(`${server.url}/__sandbox/health`)
  expect(answer.status).toBe(200)
  expect(logs.at(-1)).toMatchObject({ path: '/__sandbox/health', status: 200 })
})
