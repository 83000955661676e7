import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { startServer } from '../_servers.ts'

// HEAD is GET without the body (RFC 9110, section 9.3.2), and readiness
// checks send it: `wait-on http://127.0.0.1:4100/__sandbox/health` polls with
// HEAD and waits for a 2xx.

it('answers HEAD /__sandbox/health of the server as GET, without a body', async () => {
  const server = await startServer({ seed: 1 })
  const get = await fetch(`${server.url}/__sandbox/health`)
  const head = await fetch(`${server.url}/__sandbox/health`, {
    method: 'HEAD',
  })
  expect(head.status).toBe(200)
  expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'))
  expect(head.headers.get('x-request-id')).toMatch(/^req_/)
  expect(await head.text()).toBe('')
})

it('answers HEAD /openapi.json and /__sandbox/state in process as GET, without a body', async () => {
  const sandbox = createSandbox({ seed: 1 })
  for (const path of ['/openapi.json', '/__sandbox/state']) {
    const head = await sandbox.fetch(
      new Request(`http://localhost${path}`, { method: 'HEAD' }),
    )
    expect(head.status).toBe(200)
    expect(head.headers.get('content-type')).toBe('application/json')
    expect(head.body).toBeNull()
  }
})

it('lists HEAD in Allow beside GET, and still refuses HEAD where there is no GET', async () => {
  const sandbox = createSandbox({ seed: 1 })
  const wrong = await sandbox.fetch(
    new Request('http://localhost/__sandbox/health', { method: 'PUT' }),
  )
  expect(wrong.status).toBe(405)
  expect(wrong.headers.get('allow')).toBe('GET, HEAD, OPTIONS')
  const operation = await sandbox.fetch(
    new Request('http://localhost/v1/customers', { method: 'HEAD' }),
  )
  expect(operation.status).toBe(405)
  expect(operation.headers.get('allow')).toBe('POST, OPTIONS')
})
