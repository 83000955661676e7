// Runs once: every server here names its own store.
import { connect, createServer, type Socket } from 'node:net'
import { expect, it, onTestFinished } from 'vitest'
import { startRedis } from '../_redis.ts'
import { customerNames, postCustomer, startServer } from '../_servers.ts'

// A write sent to Redis whose connection closed before the answer came may
// or may not be stored, and the replica cannot tell which. It answers 503
// with Retry-After saying so, and that a retry with the same
// Idempotency-Key replays it if it was; it says degraded until Redis is
// back, then reads what Redis holds before deciding again (a change it had
// made in its own copy, such as a clock move, is kept only if Redis holds
// it). This was only seen under load (CLIENT KILL every 50 ms); a proxy
// between the replica and Redis now cuts the connection at the exact
// moment, after Redis got the write or before.

/** Every call here gives up after this long, so that a hang fails the test. */
const PATIENCE_MS = 10_000

/** Where the proxy cuts a matched command: once Redis has it, or before. */
type CutMode = 'after-sending' | 'before-sending'

/** One command a client sent, as RESP: its arguments and its bytes. */
interface Command {
  args: string[]
  bytes: Buffer
}

/**
 * Takes the whole commands (RESP arrays of bulk strings, all that the Redis
 * client sends) off the front of `buffer`, and what is left of a command
 * not yet whole.
 */
function splitCommands(buffer: Buffer): { commands: Command[]; rest: Buffer } {
  const commands: Command[] = []
  let start = 0
  for (;;) {
    let at = start
    const line = (): string | undefined => {
      const end = buffer.indexOf('\r\n', at)
      if (end < 0) return undefined
      const text = buffer.toString('latin1', at, end)
      at = end + 2
      return text
    }
    const head = line()
    if (head === undefined) break
    if (!head.startsWith('*')) throw new Error(`Not a RESP array: ${head}`)
    const args: string[] = []
    for (let count = Number(head.slice(1)); args.length < count;) {
      const size = line()
      if (size === undefined) break
      const length = Number(size.slice(1))
      if (buffer.length < at + length + 2) break
      args.push(buffer.toString('utf8', at, at + length))
      at += length + 2
    }
    if (args.length < Number(head.slice(1))) break
    commands.push({ args, bytes: buffer.subarray(start, at) })
    start = at
  }
  return { commands, rest: buffer.subarray(start) }
}

/**
 * A TCP proxy in front of the Redis on `port` that relays everything until
 * told to cut: then, at the first command that `matches`, it closes the
 * client's side right after sending that command on to Redis (which runs
 * it), or without sending it (Redis never sees it), and refuses every
 * connection until `restore()`.
 */
async function startCuttingProxy(port: number) {
  let armed:
    | { mode: CutMode; matches(args: string[]): boolean; done(): void }
    | undefined
  let down = false
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    client.on('error', () => {})
    if (down) return void client.destroy()
    const redis = connect(port, '127.0.0.1')
    sockets.add(redis)
    redis.on('close', () => sockets.delete(redis))
    redis.on('error', () => client.destroy())
    redis.on('data', (chunk) => client.write(chunk))
    // What is left of a command not yet whole, and whether this one is cut.
    let pending: Buffer = Buffer.alloc(0)
    let cutting = false
    client.on('close', () => {
      if (!cutting) redis.destroy()
    })
    client.on('data', (chunk: Buffer) => {
      if (cutting) return
      const { commands, rest } = splitCommands(Buffer.concat([pending, chunk]))
      pending = rest
      for (const { args, bytes } of commands) {
        const cut = armed?.matches(args) ? armed : undefined
        if (cut === undefined) {
          redis.write(bytes)
          continue
        }
        armed = undefined
        cutting = true
        down = true
        redis.removeAllListeners('data')
        if (cut.mode === 'before-sending') {
          client.destroy()
          redis.destroy()
          cut.done()
          return
        }
        // @note Redis answers in order: once the PING sent after the
        // command is answered, Redis ran the command, whose answer the
        // client never gets.
        redis.write(bytes)
        client.destroy()
        let answers = ''
        redis.on('data', (data: Buffer) => {
          answers += data.toString('latin1')
          if (!answers.endsWith('+PONG\r\n')) return
          redis.destroy()
          cut.done()
        })
        redis.write('*1\r\n$4\r\nPING\r\n')
        return
      }
    })
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const address = server.address()
  const close = () =>
    new Promise<void>((done) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => done())
    })
  onTestFinished(close)
  return {
    url: `redis://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/0`,
    /** Resolves once the next command that `matches` was cut off. */
    cut(mode: CutMode, matches: (args: string[]) => boolean): Promise<void> {
      return new Promise<void>((done) => {
        armed = { mode, matches, done }
      })
    },
    /** Closes every connection and refuses new ones, until `restore()`. */
    drop() {
      down = true
      for (const socket of sockets) socket.destroy()
    },
    restore() {
      down = false
    },
  }
}

/** The APPEND script's command carrying a write whose JSON holds `marker`. */
const appendOf =
  (marker: string) =>
  ([name = '', ...args]: string[]): boolean =>
    /^EVAL(?:SHA)?$/i.test(name) &&
    args.some((arg) => arg.startsWith('{"write":') && arg.includes(marker))

const get = (url: string, path: string) =>
  fetch(`${url}${path}`, { signal: AbortSignal.timeout(PATIENCE_MS) })

async function waitForHealth(url: string): Promise<number> {
  let status = 0
  for (const started = Date.now(); Date.now() - started < PATIENCE_MS;) {
    status = (await get(url, '/__sandbox/health')).status
    if (status === 200) break
    await new Promise((done) => setTimeout(done, 50))
  }
  return status
}

/** A replica on a fresh Redis behind a cutting proxy, and a keyed create of one customer. */
async function setUp(namespace: string) {
  const redis = await startRedis()
  const proxy = await startCuttingProxy(redis.port)
  const server = await startServer({
    seed: 1,
    customersPerAccount: 0,
    store: { url: proxy.url, namespace },
  })
  expect(await customerNames(server.url)).toEqual([])
  const body = { name: 'Cut Off', email: `${namespace}@example.com` }
  const post = () =>
    postCustomer(server.url, body, {
      headers: { 'idempotency-key': `${namespace}-1` },
      signal: AbortSignal.timeout(PATIENCE_MS),
    })
  return { proxy, server, body, post }
}

/** What a user sees while Redis is away after the cut: 503, Retry-After, degraded. */
async function expectOutage(url: string, answer: Response): Promise<string> {
  expect(answer.status).toBe(503)
  expect(answer.headers.get('retry-after')).toMatch(/^\d+$/)
  const problem = (await answer.json()) as { code: string; detail: string }
  expect(problem.code).toBe('storage_unavailable')
  const health = await get(url, '/__sandbox/health')
  expect(health.status).toBe(503)
  expect(health.headers.get('retry-after')).toMatch(/^\d+$/)
  expect(await health.json()).toMatchObject({
    status: 'degraded',
    storage: { code: 'REDIS_UNAVAILABLE' },
  })
  return problem.detail
}

const STORED_MAYBE =
  /may or may not be stored: retry it with the same Idempotency-Key, which replays it if it was/
// An admin change takes no Idempotency-Key: it is read back instead.
const CHANGED_MAYBE = /may or may not be stored: once .*, read it back/

it('answers 503 "may or may not be stored" for a write Redis ran before the connection closed, and replays it on a keyed retry', async () => {
  const { proxy, server, body, post } = await setUp('cut-after')
  const cut = proxy.cut('after-sending', appendOf(body.email))
  const [answer] = await Promise.all([post(), cut])

  const detail = await expectOutage(server.url, answer)
  expect(detail).toMatch(STORED_MAYBE)
  expect(detail).not.toMatch(/nothing was changed/)

  proxy.restore()
  expect(await waitForHealth(server.url)).toBe(200)
  const retried = await post()
  expect(retried.status).toBe(201)
  expect(retried.headers.get('idempotent-replayed')).toBe('true')
  expect(await retried.json()).toMatchObject(body)
  expect(await customerNames(server.url)).toEqual(['Cut Off'])
}, 30_000)

it('answers 503 "may or may not be stored" for a write cut off before Redis got it, and creates it once on a keyed retry', async () => {
  const { proxy, server, body, post } = await setUp('cut-before')
  const cut = proxy.cut('before-sending', appendOf(body.email))
  const [answer] = await Promise.all([post(), cut])

  // @note The replica sent it and heard nothing: it cannot know that Redis
  // never got it, so it says no more than in the case above.
  const detail = await expectOutage(server.url, answer)
  expect(detail).toMatch(STORED_MAYBE)

  proxy.restore()
  expect(await waitForHealth(server.url)).toBe(200)
  const retried = await post()
  expect(retried.status).toBe(201)
  expect(retried.headers.get('idempotent-replayed')).toBeNull()
  expect(await retried.json()).toMatchObject(body)
  expect(await customerNames(server.url)).toEqual(['Cut Off'])
}, 30_000)

it('answers 503 "nothing was changed" for a write that arrives while the connection is down, and creates it once on a keyed retry', async () => {
  const { proxy, server, body, post } = await setUp('cut-idle')
  proxy.drop()
  // Once the replica has seen the connection close: the write is never sent.
  for (const started = Date.now(); Date.now() - started < PATIENCE_MS;) {
    if ((await get(server.url, '/__sandbox/health')).status === 503) break
    await new Promise((done) => setTimeout(done, 20))
  }
  const detail = await expectOutage(server.url, await post())
  expect(detail).toMatch(/nothing was changed/)
  expect(detail).not.toMatch(/may or may not/)

  proxy.restore()
  expect(await waitForHealth(server.url)).toBe(200)
  const retried = await post()
  expect(retried.status).toBe(201)
  expect(retried.headers.get('idempotent-replayed')).toBeNull()
  expect(await retried.json()).toMatchObject(body)
  expect(await customerNames(server.url)).toEqual(['Cut Off'])
}, 30_000)

/** Moves the sandbox clock of the server at `url` to `now`. */
const setClock = (url: string, now: string) =>
  fetch(`${url}/__sandbox/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ now }),
    signal: AbortSignal.timeout(PATIENCE_MS),
  })

/** The year the sandbox clock of the server at `url` shows. */
async function clockYear(url: string): Promise<string> {
  const clock = await get(url, '/__sandbox/clock')
  expect(clock.status).toBe(200)
  return ((await clock.json()) as { now: string }).now.slice(0, 4)
}

it.for(['after-sending', 'before-sending'] as const)(
  'shows what Redis holds after a clock move cut off %s, which the replica had made in its own copy',
  { timeout: 30_000 },
  async (mode) => {
    const { proxy, server } = await setUp(`clock-${mode}`)
    const year = await clockYear(server.url)
    const cut = proxy.cut(mode, appendOf('2040-01-01'))
    const [answer] = await Promise.all([
      setClock(server.url, '2040-01-01T00:00:00Z'),
      cut,
    ])
    expect(await expectOutage(server.url, answer)).toMatch(CHANGED_MAYBE)

    proxy.restore()
    expect(await waitForHealth(server.url)).toBe(200)
    // @note The replica moved its own clock before storing the move: it
    // now serves what Redis holds, the move or not, as the fleet sees it.
    expect(await clockYear(server.url)).toBe(
      mode === 'after-sending' ? '2040' : year,
    )
  },
)
