import { connect, type Socket } from 'node:net'
import { afterEach, expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import type { SandboxServerOptions } from '../../src/runtimes/node.ts'
import { rawExchange } from '../_raw.ts'
import { runCli, startCli, startServer } from '../_servers.ts'

const sockets: Socket[] = []
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy()
})

const start = (options: SandboxServerOptions = {}) =>
  startServer({ seed: 1, ...options })

/** Opens a connection, sends `text` and collects what comes back until it closes. */
const open = (port: number, text = '') => {
  const socket = connect(port, '127.0.0.1')
  sockets.push(socket)
  socket.on('error', () => {})
  let data = ''
  socket.setEncoding('latin1').on('data', (chunk: string) => (data += chunk))
  const closed = new Promise<string>((resolve) =>
    socket.on('close', () => resolve(data)),
  )
  const connected = new Promise<void>((resolve) =>
    socket.once('connect', () => resolve()),
  )
  if (text) socket.write(text)
  return { socket, closed, connected, data: () => data }
}

const problemOf = (answer: string) =>
  JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))

it('returns 408 request_timeout naming requestTimeout and closes the connection when a body stalls', async () => {
  const { port } = await start({ headersTimeout: 100, requestTimeout: 300 })
  const { closed } = open(
    port,
    [
      'POST /v1/customers HTTP/1.1',
      'Host: localhost',
      `Authorization: Bearer ${DEMO_KEY_ONE}`,
      'Content-Type: application/json',
      'Content-Length: 100',
      '',
      '{"name":',
    ].join('\r\n'),
  )
  const answer = await closed
  expect(answer).toMatch(/^HTTP\/1\.1 408 /)
  const problem = problemOf(answer)
  expect(problem.code).toBe('request_timeout')
  expect(problem.detail).toContain('requestTimeout')
})

it('returns 408 request_timeout naming headersTimeout and closes the connection when headers stall', async () => {
  const { port } = await start({ headersTimeout: 200, requestTimeout: 5000 })
  const { closed } = open(port, 'GET /__sandbox/health HTTP/1.1\r\nHost: loc')
  const answer = await closed
  expect(answer).toMatch(/^HTTP\/1\.1 408 /)
  expect(problemOf(answer).detail).toContain('headersTimeout')
})

it('returns 431 headers_too_large naming maxHeadersCount past the limit, and answers at it', async () => {
  const { port } = await start({ maxHeadersCount: 10 })
  const request = (count: number) =>
    rawExchange(
      port,
      [
        'GET /__sandbox/health HTTP/1.1',
        'Host: localhost',
        ...Array.from({ length: count - 1 }, (_, i) => `X-Extra-${i}: ${i}`),
        '',
        '',
      ].join('\r\n'),
    )
  expect((await request(10)).status).toBe(200)
  const over = await request(11)
  expect(over.status).toBe(431)
  expect(JSON.parse(over.body).code).toBe('headers_too_large')
  expect(JSON.parse(over.body).detail).toContain('maxHeadersCount')
})

it('closes connections beyond maxConnections at once and takes new ones when others close', async () => {
  const { port } = await start({ maxConnections: 2 })
  const first = open(port)
  const second = open(port)
  await Promise.all([first.connected, second.connected])
  // Answered: both connections are counted by the server.
  for (const held of [first, second]) {
    held.socket.write(
      'GET /__sandbox/health HTTP/1.1\r\nHost: localhost\r\n\r\n',
    )
  }
  await expect.poll(() => first.data() + second.data()).toMatch(/200[\s\S]*200/)
  const third = open(
    port,
    'GET /__sandbox/health HTTP/1.1\r\nHost: localhost\r\n\r\n',
  )
  expect(await third.closed).toBe('')
  first.socket.destroy()
  await first.closed
  await expect
    .poll(
      async () =>
        (
          await rawExchange(
            port,
            'GET /__sandbox/health HTTP/1.1\r\nHost: localhost\r\n\r\n',
          ).catch(() => ({ status: 0 }))
        ).status,
    )
    .toBe(200)
})

it('closes an idle keep-alive connection after keepAliveTimeout', async () => {
  const { port } = await start({ keepAliveTimeout: 100 })
  const idle = open(
    port,
    'GET /__sandbox/health HTTP/1.1\r\nHost: localhost\r\n\r\n',
  )
  expect(await idle.closed).toMatch(/^HTTP\/1\.1 200 /)
})

it('refuses limits that are not whole positive numbers, or a headersTimeout over requestTimeout', async () => {
  await expect(start({ maxConnections: 0 })).rejects.toThrow(/maxConnections/)
  await expect(
    start({ headersTimeout: 5000, requestTimeout: 1000 }),
  ).rejects.toThrow(/headersTimeout .* must not exceed requestTimeout/)
  const cli = runCli(['--port', '0', '--request-timeout', 'soon'])
  expect(await cli.exited).toBe(2)
  expect(cli.stderr()).toMatch(/--request-timeout must be a whole number/)
  const inverted = runCli([
    '--port',
    '0',
    '--headers-timeout',
    '5000',
    '--request-timeout',
    '1000',
  ])
  expect(await inverted.exited).toBe(2)
  expect(inverted.stderr()).toMatch(
    /--headers-timeout \(5000\) must not exceed --request-timeout \(1000\)/,
  )
  expect(inverted.stderr()).not.toMatch(/\n\s+at /)
})

it('takes the limits as CLI flags', async () => {
  const cli = await startCli([
    '--port',
    '0',
    '--quiet',
    '--max-headers-count',
    '5',
    '--max-connections',
    '10',
    '--headers-timeout',
    '1000',
    '--request-timeout',
    '2000',
    '--keep-alive-timeout',
    '1000',
  ])
  const port = Number(new URL(cli.url).port)
  const answer = await rawExchange(
    port,
    'GET /__sandbox/health HTTP/1.1\r\nHost: localhost\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\n\r\n',
  )
  expect(answer.status).toBe(431)
})
