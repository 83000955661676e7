import { connect } from 'node:net'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { httpExchange } from '../_raw.ts'
import { startCli, startServer } from '../_servers.ts'

const start = () => startServer({ seed: 1 })

const MIB = 1_048_576
// More than loopback's socket buffers hold on both ends: a server that
// keeps reading takes all of it.
const FLOOD_LIMIT = 64 * MIB

/** Refusals answered before the body is read, by who answers them. */
const EARLY: [string, string, Record<string, string>][] = [
  ['401 from an operation', '/v1/customers', {}],
  [
    '415 from an operation',
    '/v1/customers',
    { authorization: `Bearer ${DEMO_KEY_ONE}`, 'content-type': 'text/csv' },
  ],
  ['404 under the API', '/v1/nothing', {}],
  ['404 of the admin surface', '/__sandbox/nothing', {}],
  ['403 of the edge', '/__sandbox/reset', { origin: 'https://evil.example' }],
]

const head = (path: string, headers: Record<string, string>): string =>
  [
    `POST ${path} HTTP/1.1`,
    'Host: localhost',
    'Content-Type: application/json',
    `Content-Length: ${100 * 1024 * MIB}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    '',
    '',
  ].join('\r\n')

it.each(EARLY)(
  'answers a %s and closes the connection while the body is still trickling in',
  async (_, path, headers) => {
    const { port } = await start()
    const socket = connect(port, '127.0.0.1')
    socket.write(head(path, headers))
    const trickle = setInterval(() => socket.write('{"name":'), 10)
    let answer = ''
    socket
      .setEncoding('latin1')
      .on('data', (chunk: string) => (answer += chunk))
    await new Promise<void>((resolve) => {
      socket.on('close', () => resolve())
      socket.on('error', () => {})
    })
    clearInterval(trickle)
    expect(answer).toMatch(/^HTTP\/1\.1 4\d\d /)
    expect(answer.toLowerCase()).toContain('connection: close')
  },
)

it.each(EARLY)(
  'stops reading the body after a %s instead of draining it for keep-alive, and the flooding client still reads its answer',
  async (_, path, headers) => {
    const { port } = await start()
    const socket = connect(port, '127.0.0.1')
    socket.on('error', () => {})
    const state = { closed: false }
    socket.on('close', () => (state.closed = true))
    let answer = ''
    socket.setEncoding('latin1').on('data', (text: string) => (answer += text))
    socket.write(head(path, headers))
    const chunk = Buffer.alloc(64 * 1024, 0x20)
    let sent = 0
    while (!state.closed && sent < FLOOD_LIMIT) {
      sent += chunk.length
      if (!socket.write(chunk)) {
        await new Promise<void>((resolve) => {
          socket.once('drain', resolve)
          socket.once('close', resolve)
        })
      }
    }
    socket.destroy()
    expect(state.closed).toBe(true)
    expect(sent).toBeLessThan(FLOOD_LIMIT)
    // A reset on close could make the client drop the answer unread.
    expect(answer).toMatch(/^HTTP\/1\.1 4\d\d /)
  },
)

it('keeps the connection open after a refusal whose small body came with it', async () => {
  const { port } = await start()
  const answer = await httpExchange(
    port,
    'POST',
    '/v1/customers',
    {
      host: 'localhost',
      'content-type': 'application/json',
      connection: 'keep-alive',
    },
    '{"name":"Ada","email":"ada@example.com"}',
  )
  expect(answer.status).toBe(401)
  expect(answer.headers.connection).toBe('keep-alive')
})

/**
 * Floods `path` without reading until its writes stall (the server stopped
 * reading), then reads what the server sent.
 */
async function floodThenRead(
  port: number,
  path: string,
  headers: Record<string, string>,
): Promise<{ stalled: boolean; sent: number; answer: string }> {
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => {})
  const state = { closed: false }
  socket.on('close', () => (state.closed = true))
  // Not reading: what arrives waits in the socket's buffer, where a reset
  // would discard it.
  socket.pause()
  socket.write(head(path, headers))
  const chunk = Buffer.alloc(64 * 1024, 0x20)
  let sent = 0
  let stalled = false
  while (!state.closed && !stalled && sent < FLOOD_LIMIT) {
    sent += chunk.length
    if (!socket.write(chunk)) {
      stalled = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(true), 500)
        socket.once('drain', () => {
          clearTimeout(timer)
          resolve(false)
        })
      })
    }
  }
  let answer = ''
  socket.setEncoding('latin1').on('data', (text: string) => (answer += text))
  socket.resume()
  await new Promise<void>((resolve) => {
    if (state.closed) resolve()
    else socket.once('close', () => resolve())
  })
  return { stalled, sent, answer }
}

it(
  'does not reset the connection under a 401 while the client still sends: clients that read only once their writes stall get their answers',
  async () => {
    const [, path, headers] = EARLY[0]!
    // In a process of its own, the server reads while this client writes.
    const cli = await startCli(['--port', '0', '--quiet', '--seed', '1'])
    const port = Number(new URL(cli.url).port)
    // One after the other: once warm, the server answers before much of the
    // body is in, and reads on for a while after its answer.
    for (let client = 0; client < 5; client++) {
      const { stalled, sent, answer } = await floodThenRead(port, path, headers)
      expect(stalled).toBe(true)
      expect(sent).toBeLessThan(FLOOD_LIMIT)
      expect(answer).toMatch(/^HTTP\/1\.1 401 /)
    }
  },
  // Each connection lingers its full time before the server closes it.
  30_000,
)
