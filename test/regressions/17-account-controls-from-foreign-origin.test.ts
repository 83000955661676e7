import { afterAll, beforeAll, expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import {
  createSandboxServer,
  type SandboxServer,
} from '../../src/runtimes/node.ts'

// The documented demo keys are public, so a key alone must not let another
// web page move an account's clock or queue its faults.
let server: SandboxServer
beforeAll(async () => {
  server = await createSandboxServer({ port: 0, playground: false })
})
afterAll(() => server.close())

const clock = (headers: Record<string, string>, method = 'POST') =>
  fetch(`${server.url}/__sandbox/account/clock`, {
    method,
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
      ...headers,
    },
    ...(method === 'POST' && { body: '{"advance_seconds":3600}' }),
  })

it('refuses an account clock move from a foreign Origin with 403 forbidden_origin, and the clock stays', async () => {
  const response = await clock({ origin: 'https://evil.example' })
  expect(response.status).toBe(403)
  expect(response.headers.get('access-control-allow-origin')).toBeNull()
  expect((await response.json()).code).toBe('forbidden_origin')
  // The account never got a clock of its own.
  expect((await (await clock({}, 'GET')).json()).own).toBe(false)
})

it('refuses the account surface on a non-loopback Host with 421 (DNS rebinding)', async () => {
  const { request } = await import('node:http')
  const status = await new Promise<number>((resolve, reject) => {
    const req = request(
      `${server.url}/__sandbox/account/clock`,
      {
        headers: {
          host: 'evil.example',
          authorization: `Bearer ${DEMO_KEY_ONE}`,
        },
      },
      (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      },
    )
    req.on('error', reject)
    req.end()
  })
  expect(status).toBe(421)
})

it('moves the account clock from this machine', async () => {
  const response = await clock({})
  expect(response.status).toBe(200)
})
