import { connect, type Socket } from 'node:net'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { startServer } from '../_servers.ts'

// HTTP/1.1 lets a client send several requests before reading any answer
// (pipelining); the answers come back in order on the same connection.

const create = (name: string): string => {
  const body = JSON.stringify({ name, email: 'ada@example.com' })
  return [
    'POST /v1/customers HTTP/1.1',
    'Host: localhost',
    `Authorization: Bearer ${DEMO_KEY_ONE}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n')
}

/** Everything the server sends on `socket` until it closes it. */
const readAll = (socket: Socket): Promise<string> =>
  new Promise((resolve) => {
    let text = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => (text += chunk))
    socket.on('error', () => {})
    socket.on('close', () => resolve(text))
  })

const statuses = (text: string): number[] =>
  [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]))

it('answers pipelined creates before refusing a malformed request that follows them, so a stored customer is never reported as refused', async () => {
  const server = await startServer({ seed: 1, customersPerAccount: 0 })
  const socket = connect(server.port, '127.0.0.1')
  const answers = readAll(socket)
  socket.write(
    create('First') +
      create('Second') +
      'GET /__sandbox/health HTTP/1.1\r\nHost: localhost\r\nContent-Length: x\r\n\r\n',
  )
  const text = await answers
  expect(statuses(text)).toEqual([201, 201, 400])
  expect(text).toContain('"name":"First"')
  expect(text).toContain('"name":"Second"')
  expect(text).toContain('"code":"invalid_request"')
  expect(server.sandbox.customers.list().map((c) => c.name)).toEqual(
    expect.arrayContaining(['First', 'Second']),
  )
})

it('answers a malformed request at once when nothing is pending before it on its connection', async () => {
  const server = await startServer({ seed: 1 })
  const socket = connect(server.port, '127.0.0.1')
  const answers = readAll(socket)
  socket.write(
    'GET /__sandbox/health HTTP/1.1\r\nHost: localhost\r\nContent-Length: x\r\n\r\n',
  )
  expect(statuses(await answers)).toEqual([400])
})

it('works on the pipelined requests of a client that does not read its answers only as fast as it reads them, instead of building every answer in memory', async () => {
  let handled = 0
  const server = await startServer({
    seed: 1,
    customersPerAccount: 1000, // GET /__sandbox/state is about 0.3 MB
    onLog: () => handled++,
  })
  const size = (await (await fetch(`${server.url}/__sandbox/state`)).text())
    .length
  expect(size).toBeGreaterThan(250_000)
  handled = 0
  const sent = 200
  const socket = connect(server.port, '127.0.0.1')
  socket.on('error', () => {})
  socket.pause()
  socket.write(
    'GET /__sandbox/state HTTP/1.1\r\nHost: localhost\r\n\r\n'.repeat(sent),
  )
  // Wait until the server has done what it will do before the client reads.
  let last = -1
  while (handled !== last) {
    last = handled
    await new Promise((resolve) => setTimeout(resolve, 300))
  }
  // The socket buffers of loopback hold a few of these answers; building all
  // 200 would take 60 MB (a 64 KB write of such requests could take gigabytes).
  expect(handled).toBeLessThan(sent / 2)

  // Another client is served meanwhile (and logged).
  expect((await fetch(`${server.url}/__sandbox/health`)).status).toBe(200)

  // Once the client reads, every answer comes, in order.
  let received = 0
  let tail = ''
  socket.setEncoding('latin1')
  await new Promise<void>((resolve) => {
    socket.on('data', (chunk: string) => {
      const text = tail + chunk
      received += (text.match(/HTTP\/1\.1 200 OK/g) ?? []).length
      tail = text.slice(-14)
      if (received === sent) resolve()
    })
    socket.resume()
  })
  socket.destroy()
  expect(handled).toBe(sent + 1)
})
