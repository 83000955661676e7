import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { rawExchange } from '../_raw.ts'
import { runCli, startCli, startServer } from '../_servers.ts'

// A client that sends whole requests and then reads none of the answers: once
// the system's socket buffers are full, node:http waits for it forever, as
// neither headersTimeout nor requestTimeout applies to a request already in.
// A few hundred such clients fill maxConnections.

const STATE = 'GET /__sandbox/state HTTP/1.1\r\nHost: localhost\r\n\r\n'
const HEALTH = 'GET /__sandbox/health HTTP/1.1\r\nHost: localhost\r\n\r\n'
// GET /__sandbox/state is about 0.3 MB with 1,000 customers per account.
const CUSTOMERS = 1000

/** Opens a connection that sends `text` and reads nothing until told to. */
const openStalled = async (port: number, text: string): Promise<Socket> => {
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => {})
  socket.pause()
  await once(socket, 'connect')
  socket.write(text)
  return socket
}

/** Reads what is left on `socket` and counts the answers, until it closes. */
const answersUntilClosed = (socket: Socket): Promise<number> =>
  new Promise((resolve) => {
    let answers = 0
    let tail = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      const text = tail + chunk
      answers += (text.match(/HTTP\/1\.1 200 OK/g) ?? []).length
      tail = text.slice(-14)
    })
    socket.on('close', () => resolve(answers))
    socket.resume()
  })

/** The status a fresh connection gets for a health check, or 0 when it is closed unanswered. */
const healthOf = (port: number): Promise<number> =>
  rawExchange(port, HEALTH, 1000).then(
    (answer) => answer.status,
    () => 0,
  )

// About 60 MB of answers each, more than the buffers of loopback hold.
const FLOODS: [string, string, number][] = [
  ['written whole (GET /__sandbox/state, 0.3 MB)', STATE, 200],
  [
    'with a streamed body (GET /openapi.json, 0.1 MB)',
    'GET /openapi.json HTTP/1.1\r\nHost: localhost\r\n\r\n',
    500,
  ],
]

it.each(FLOODS)(
  'closes the connection of a client that never reads its answers, %s, after sendTimeout, which frees its place under maxConnections',
  async (_, request, sent) => {
    const server = await startServer({
      seed: 1,
      customersPerAccount: CUSTOMERS,
      sendTimeout: 200,
      maxConnections: 1,
    })
    const stalled = await openStalled(server.port, request.repeat(sent))
    // Its place is taken until the server gives up on it; then others are served.
    await expect
      .poll(() => healthOf(server.port), { timeout: 15_000, interval: 100 })
      .toBe(200)
    // The API too; a try still refused while the health check's connection
    // closes is refused before its request is read.
    const create = (): Promise<number> =>
      fetch(`${server.url}/v1/customers`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${DEMO_KEY_ONE}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
      }).then(
        (response) => response.status,
        () => 0,
      )
    await expect.poll(create).toBe(201)
    expect(
      server.sandbox.customers.list().filter((c) => c.name === 'Ada'),
    ).toHaveLength(1)
    // The connection was cut, not finished: reading now gets only part.
    const answers = await answersUntilClosed(stalled)
    expect(answers).toBeLessThan(sent)
  },
  20_000,
)

it('does not cut a slow client that keeps reading, though its answers wait longer than sendTimeout in all', async () => {
  const server = await startServer({
    seed: 1,
    customersPerAccount: CUSTOMERS,
    sendTimeout: 500,
  })
  const sent = 60 // about 20 MB
  const socket = await openStalled(server.port, STATE.repeat(sent))
  socket.setEncoding('latin1')
  let answers = 0
  let tail = ''
  let read = 0
  // @note Bursts of 2 MB every 100 ms: the server sees bytes leave only
  // when the system frees a good part of the socket's buffers (megabytes).
  const outcome = await new Promise<string>((resolve) => {
    const pause = (): void => {
      socket.pause()
      setTimeout(() => socket.resume(), 100)
    }
    socket.on('data', (chunk: string) => {
      const text = tail + chunk
      answers += (text.match(/HTTP\/1\.1 200 OK/g) ?? []).length
      tail = text.slice(-14)
      if (answers === sent) resolve('all answers read')
      read += chunk.length
      if (read < 2_097_152) return
      read = 0
      pause()
    })
    socket.once('close', () => resolve(`closed after ${answers} answers`))
    pause()
  })
  socket.destroy()
  expect(outcome).toBe('all answers read')
}, 30_000)

it('answers a request held by a scenario delay longer than sendTimeout', async () => {
  const server = await startServer({ seed: 1, sendTimeout: 100 })
  const response = await fetch(`${server.url}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
      'x-sandbox-scenario': 'delay_ms=600',
    },
    body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
  })
  expect(response.status).toBe(201)
  expect(await response.json()).toMatchObject({ name: 'Ada' })
})

it('keeps an idle keep-alive connection open past sendTimeout, for keepAliveTimeout to close', async () => {
  const server = await startServer({
    seed: 1,
    sendTimeout: 100,
    keepAliveTimeout: 10_000,
  })
  const socket = connect(server.port, '127.0.0.1')
  socket.on('error', () => {})
  let text = ''
  socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk))
  socket.write(HEALTH)
  await expect.poll(() => text).toMatch(/^HTTP\/1\.1 200 /)
  await new Promise((resolve) => setTimeout(resolve, 600))
  socket.write(HEALTH)
  await expect.poll(() => text.match(/HTTP\/1\.1 200 /g)?.length ?? 0).toBe(2)
  expect(socket.destroyed).toBe(false)
  socket.destroy()
})

it('refuses a sendTimeout that is not a whole number from 1 to 2147483647, naming the bounds', async () => {
  for (const value of [0, 1.5, 2 ** 31]) {
    await expect(startServer({ sendTimeout: value })).rejects.toThrow(
      `option "sendTimeout" must be a whole number from 1 to 2147483647, not ${value}. See SandboxServerOptions`,
    )
  }
  await expect(
    startServer({ sendTimeout: '100' as unknown as number }),
  ).rejects.toThrow(
    'option "sendTimeout" must be a whole number from 1 to 2147483647, not "100"',
  )
  const cli = runCli(['--port', '0', '--send-timeout', 'soon'])
  expect(await cli.exited).toBe(2)
  expect(cli.stderr()).toMatch(/--send-timeout must be a whole number/)
})

it('takes sendTimeout as the --send-timeout flag', async () => {
  const cli = await startCli([
    '--port',
    '0',
    '--quiet',
    '--customers',
    String(CUSTOMERS),
    '--max-connections',
    '1',
    '--send-timeout',
    '200',
  ])
  const port = Number(new URL(cli.url).port)
  const stalled = await openStalled(port, STATE.repeat(200))
  await expect
    .poll(() => healthOf(port), { timeout: 15_000, interval: 100 })
    .toBe(200)
  stalled.destroy()
}, 20_000)
