import { connect, type Socket } from 'node:net'
import { expect, it } from 'vitest'
import { startCli } from '../_servers.ts'

// A thousand clients connecting at once (the concurrency test's 1,000
// fetches) now and then got ECONNRESET: node listens with a backlog of 511,
// so connections beyond it found the listen queue full while the server was
// busy accepting the others.

const BURST = 800

/** Opens a connection and resolves once the system has completed it, or with false. */
const connected = (port: number, sockets: Socket[]): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    sockets.push(socket)
    const timer = setTimeout(() => resolve(false), 3000)
    socket.once('connect', () => {
      clearTimeout(timer)
      resolve(true)
    })
    socket.once('error', () => {
      clearTimeout(timer)
      resolve(false)
    })
  })

/** Sends one health check on `socket` and resolves with its status line, or ''. */
const health = (socket: Socket): Promise<string> =>
  new Promise((resolve) => {
    let data = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      data += chunk
      if (data.includes('\r\n')) resolve(data.split('\r\n')[0]!)
    })
    socket.once('error', () => resolve(''))
    socket.once('close', () => resolve(data.split('\r\n')[0] ?? ''))
    socket.write(
      'GET /__sandbox/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
    )
  })

it(`queues a burst of ${BURST} connections that arrive while the server is busy, and answers each`, async () => {
  const cli = await startCli(['--port', '0', '--quiet', '--customers', '0'])
  const port = Number(new URL(cli.url).port)
  const sockets: Socket[] = []
  try {
    // Stopped, the server accepts nothing: every connection the system
    // completes waits in the listen queue, as under a burst it cannot keep up with.
    cli.child.kill('SIGSTOP')
    const done = await Promise.all(
      Array.from({ length: BURST }, () => connected(port, sockets)),
    )
    cli.child.kill('SIGCONT')
    expect(done.filter(Boolean)).toHaveLength(BURST)

    const answers = await Promise.all(sockets.map(health))
    expect(answers.filter((line) => line === 'HTTP/1.1 200 OK')).toHaveLength(
      BURST,
    )
  } finally {
    cli.child.kill('SIGCONT')
    for (const socket of sockets) socket.destroy()
  }
}, 30_000)
