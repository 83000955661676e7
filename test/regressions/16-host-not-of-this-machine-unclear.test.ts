import { expect, it } from 'vitest'
import {
  createSandboxServer,
  SandboxStartError,
} from '../../src/runtimes/node.ts'
import { startServer } from '../_servers.ts'

it('says what to set when the host is not an address of this machine', async () => {
  // 192.0.2.0/24 is TEST-NET-1: never an address of this machine.
  const start = createSandboxServer({
    port: 0,
    host: '192.0.2.1',
    adminToken: 'admin-token-of-sixteen-chars',
    playground: false,
  })
  await expect(start).rejects.toBeInstanceOf(SandboxStartError)
  await expect(start).rejects.toThrow(
    /Cannot listen on 192\.0\.2\.1: it is not an address of this machine.*host: '127\.0\.0\.1'/,
  )
})

it('listens on [::1] written as in a URL, as on ::1', async () => {
  const server = await startServer({ host: '[::1]', seed: 1 })
  expect(server.url).toMatch(/^http:\/\/\[::1\]:\d+$/)
  expect((await fetch(`${server.url}/__sandbox/health`)).status).toBe(200)
})
