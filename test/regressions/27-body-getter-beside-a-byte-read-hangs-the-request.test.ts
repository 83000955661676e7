import { expect, it, vi } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { startServer } from '../_servers.ts'

// The server's request (src/runtimes/node.ts) read its body as bytes
// straight from node's stream, but left `request.body` to srvx, whose
// getter builds a web stream over the socket. Asked beside a read of the
// bytes, before it or while it ran, that stream was never read: once its
// queue was full it paused the socket, and the read of the bytes never
// ended. An admin call on a durable store past 16 KiB (data file) or 64 KiB
// (Redis) hung so (27-large-admin-body-never-answered-on-a-durable-store,
// fixed then where the body was asked for); any code that asks `.body`
// would hang the same way. `body` is now a stream over the same read.

// Each request reaching the app is first asked for its `body`; one with an
// `x-probe` header is answered here, from what the request gives.
vi.mock('../../src/runtimes/server-app.ts', async (original) => {
  const actual =
    await original<typeof import('../../src/runtimes/server-app.ts')>()
  const probe = async (request: Request, how: string): Promise<Response> => {
    if (how === 'bytes-then-body') {
      const read = request.bytes()
      const body = request.body
      const bytes = await read
      return Response.json({
        length: bytes.byteLength,
        body: body !== null,
        bodyUsed: request.bodyUsed,
      })
    }
    if (how === 'body-then-text') {
      const body = request.body
      const text = await request.text()
      return Response.json({
        length: text.length,
        body: body !== null,
        bodyUsed: request.bodyUsed,
      })
    }
    // The stream itself, then the bytes it took.
    const bytes = await new Response(request.body).bytes()
    const again = await request.text().then(
      () => 'read',
      (error: unknown) => (error instanceof TypeError ? 'unusable' : 'other'),
    )
    return Response.json({
      length: bytes.byteLength,
      again,
      bodyUsed: request.bodyUsed,
    })
  }
  return {
    ...actual,
    createServerApp: async (
      ...args: Parameters<typeof actual.createServerApp>
    ) => {
      const app = await actual.createServerApp(...args)
      return {
        ...app,
        fetch: (request: Request) => {
          const how = request.headers.get('x-probe')
          if (how !== null) return probe(request, how)
          void request.body
          return app.fetch(request)
        },
      }
    },
  }
})

const BYTES = 500_000

const padded = (json: object): string => {
  const text = JSON.stringify(json)
  return text + ' '.repeat(BYTES - text.length)
}

// Not answered at all before the fix: the test fails here, not at its own timeout.
const inTime = () => AbortSignal.timeout(10_000)

it('answers a large create whose body was asked for before the sandbox read it', async () => {
  const server = await startServer({ seed: 1 })
  const created = await fetch(`${server.url}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
    },
    body: padded({ name: 'Ada', email: 'ada@example.com' }),
    signal: inTime(),
  })
  expect(created.status, await created.clone().text()).toBe(201)
  const moved = await fetch(`${server.url}/__sandbox/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: padded({ advance_seconds: 60 }),
    signal: inTime(),
  })
  expect(moved.status, await moved.clone().text()).toBe(200)
}, 30_000)

it.each([
  ['bytes-then-body', { length: BYTES, body: true, bodyUsed: true }],
  ['body-then-text', { length: BYTES, body: true, bodyUsed: true }],
  ['stream', { length: BYTES, again: 'unusable', bodyUsed: true }],
])(
  'reads a large body whole, %s, with one read of the socket',
  async (how, expected) => {
    const server = await startServer({ seed: 1 })
    const answer = await fetch(`${server.url}/probe`, {
      method: 'POST',
      headers: { 'x-probe': how },
      body: 'x'.repeat(BYTES),
      signal: inTime(),
    })
    expect(await answer.json()).toEqual(expected)
  },
  30_000,
)

it('has no body on a GET, asked or read', async () => {
  const server = await startServer({ seed: 1 })
  const answer = await fetch(`${server.url}/probe`, {
    headers: { 'x-probe': 'bytes-then-body' },
    signal: inTime(),
  })
  expect(await answer.json()).toEqual({
    length: 0,
    body: false,
    bodyUsed: false,
  })
})
