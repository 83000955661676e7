// Runs once: every server here names its own store.
import { createServer, type Socket } from 'node:net'
import { expect, it, onTestFinished } from 'vitest'
import { runCli } from '../_servers.ts'

// A Redis that takes the connection and never answers (stopped with
// SIGSTOP, a proxy in front of none) held the start for ever: no banner, no
// error line, still waiting after 120 s. The client's timeout covers the
// TCP connection only. The start now fails within the store's timeout with
// one line naming the URL.

it('stops the start with one line naming the URL when Redis takes the connection and answers nothing', async () => {
  const sockets = new Set<Socket>()
  const silent = createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => {})
  })
  await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done))
  onTestFinished(() => {
    for (const socket of sockets) socket.destroy()
    silent.close()
  })
  const { port } = silent.address() as { port: number }
  const url = `redis://127.0.0.1:${port}/0`

  const began = Date.now()
  const cli = runCli(['--port', '0', '--store', url])
  expect(await cli.exited).toBe(1)
  expect(Date.now() - began).toBeLessThan(20_000)
  expect(sockets.size).toBeGreaterThan(0)
  const lines = cli.stderr().trim().split('\n')
  expect(lines).toEqual([
    `customer-token-sandbox: Cannot reach the Redis store at ${url}: Redis at ${url} answered nothing within 3000 ms (REDIS_TIMEOUT). Start Redis there, or give --store another URL.`,
  ])
}, 30_000)
