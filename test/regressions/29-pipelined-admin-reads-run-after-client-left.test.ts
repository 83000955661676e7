import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import { expect, it } from 'vitest'
import { rawExchange } from '../_raw.ts'
import { startServer } from '../_servers.ts'

// Clients that pipeline admin reads, read nothing and leave: the server
// went on building every answer they had asked for (3,426 state reads at
// 5,000 customers per account, with the health check unanswered for over a
// minute), although nobody was left to send them to.

const SOCKETS = 20
const PIPELINED = 20

/** Opens a connection that sends `text` and reads nothing. */
const openStalled = async (port: number, text: string): Promise<Socket> => {
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => {})
  socket.pause()
  await once(socket, 'connect')
  socket.write(text)
  return socket
}

/** Waits until `count()` has not changed for a while: the server is done. */
const settle = async (count: () => number): Promise<void> => {
  let last = -1
  while (count() !== last) {
    last = count()
    await new Promise((resolve) => setTimeout(resolve, 300))
  }
}

const healthOf = (port: number): Promise<number> =>
  rawExchange(
    port,
    'GET /__sandbox/health HTTP/1.1\r\nHost: localhost\r\n\r\n',
  ).then((answer) => answer.status)

it.each(['state', 'export'])(
  'answers none of the pipelined GET /__sandbox/%s of clients that left, and keeps answering health',
  async (path) => {
    let handled = 0
    const server = await startServer({
      seed: 1,
      customersPerAccount: 1000, // each answer is about 0.3 MB
      onLog: (log) => {
        if (log.path === `/__sandbox/${path}`) handled++
      },
    })
    const request = `GET /__sandbox/${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`
    const sockets = await Promise.all(
      Array.from({ length: SOCKETS }, () =>
        openStalled(server.port, request.repeat(PIPELINED)),
      ),
    )
    await settle(() => handled)
    // A client still connected is served: the socket buffers take a few.
    expect(handled).toBeGreaterThanOrEqual(SOCKETS)
    expect(handled).toBeLessThan(SOCKETS * PIPELINED)
    expect(await healthOf(server.port)).toBe(200)

    for (const socket of sockets) socket.destroy()
    const atClose = handled
    await settle(() => handled)
    // Before, every request still queued was run: about 300 more here.
    expect(handled - atClose).toBeLessThan(SOCKETS)
    expect(await healthOf(server.port)).toBe(200)
  },
)
