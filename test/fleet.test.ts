// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import { startRedis } from './_redis.ts'
import { startRoundRobinProxy } from './_proxy.ts'
import { customerNames, runCli, startCli } from './_servers.ts'

// Three replicas of the server on one Redis, behind a round-robin proxy, as
// a team runs the sandbox: every promise of a single server holds for the
// fleet, and so does every promise about faults. Each test starts three
// replicas (and some restart them): 30 s each, for a busy machine.

const auth = { authorization: `Bearer ${DEMO_KEY_ONE}` }
const jsonHeaders = { ...auth, 'content-type': 'application/json' }

/** Starts `count` replicas on `redisUrl`, with `extra` flags. */
const startReplicas = (redisUrl: string, count = 3, extra: string[] = []) =>
  Promise.all(
    Array.from({ length: count }, () =>
      startCli([
        '--port',
        '0',
        '--quiet',
        '--customers',
        '2',
        '--store',
        redisUrl,
        ...extra,
      ]),
    ),
  )

/** A fleet: Redis, three replicas and the proxy in front of them. */
async function startFleet(extra: string[] = [], appendfsync?: 'always') {
  const redis = await startRedis(appendfsync ? { appendfsync } : {})
  const replicas = await startReplicas(redis.url, 3, extra)
  const proxy = await startRoundRobinProxy(replicas.map((r) => r.url))
  return { redis, replicas, proxy }
}

const createCustomer = (
  url: string,
  name: string,
  headers: Record<string, string> = {},
) =>
  fetch(`${url}/v1/customers`, {
    method: 'POST',
    headers: { ...jsonHeaders, ...headers },
    body: JSON.stringify({ name, email: `${name.toLowerCase()}@example.com` }),
  })

it('serves a record that any replica answered 201 for from every replica, and a token minted on one on the others', async () => {
  const { replicas, proxy } = await startFleet()
  const created: string[] = []
  for (const name of ['Ada', 'Grace', 'Edsger', 'Barbara', 'Alan', 'Donald']) {
    const response = await createCustomer(proxy.url, name)
    expect(response.status).toBe(201)
    created.push(name)
  }
  for (const replica of replicas) {
    const names = await customerNames(replica.url)
    for (const name of created) expect(names).toContain(name)
  }

  const minted = await fetch(`${replicas[0]!.url}/v2/tokens`, {
    method: 'POST',
    headers: jsonHeaders,
    body: JSON.stringify({ scopes: ['customers:write'] }),
  })
  expect(minted.status).toBe(201)
  const { token } = (await minted.json()) as { token: string }
  for (const replica of replicas.slice(1)) {
    const response = await createCustomer(
      replica.url,
      `Held${replica.url.slice(-4)}`,
      {
        authorization: `Bearer ${token}`,
      },
    )
    expect(response.status).toBe(201)
  }
}, 30_000)

it('gives one record and identical replays for one Idempotency-Key sent to every replica at once, also after every replica and Redis restarted', async () => {
  const { redis, replicas } = await startFleet([], 'always')
  const send = (url: string) =>
    createCustomer(url, 'Once', { 'idempotency-key': 'order-7' })
  // One request per replica at once, three times over. (Within one
  // replica, as on one server, a key still being answered is a 409
  // idempotency_in_progress.)
  const answers: Response[] = []
  for (let round = 0; round < 3; round++)
    answers.push(
      ...(await Promise.all(replicas.map((replica) => send(replica.url)))),
    )
  const bodies = await Promise.all(answers.map((answer) => answer.text()))
  expect(answers.map((answer) => answer.status)).toEqual(Array(9).fill(201))
  expect(new Set(bodies).size).toBe(1)
  expect(
    (await customerNames(replicas[1]!.url)).filter((n) => n === 'Once'),
  ).toHaveLength(1)

  for (const replica of replicas) expect(await replica.stop()).toBe(0)
  await redis.kill('SIGKILL')
  await redis.restart()
  const again = await startReplicas(redis.url)
  for (const replica of again) {
    const replay = await send(replica.url)
    expect(replay.status).toBe(201)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(await replay.text()).toBe(bodies[0])
  }
  expect(
    (await customerNames(again[2]!.url)).filter((n) => n === 'Once'),
  ).toHaveLength(1)
}, 30_000)

it("makes an account's clock moved on one replica the clock of every replica's next request", async () => {
  const { replicas } = await startFleet()
  const moved = await fetch(`${replicas[0]!.url}/__sandbox/account/clock`, {
    method: 'POST',
    headers: jsonHeaders,
    body: JSON.stringify({ advance_seconds: 86_400 }),
  })
  expect(moved.status).toBe(200)
  const { now } = (await moved.json()) as { now: string }
  for (const replica of replicas.slice(1)) {
    const clock = await fetch(`${replica.url}/__sandbox/account/clock`, {
      headers: auth,
    })
    const seen = Date.parse(((await clock.json()) as { now: string }).now)
    // A running clock: a day ahead of the wall clock on every replica.
    expect(seen - Date.parse(now)).toBeGreaterThanOrEqual(0)
    expect(seen - Date.now()).toBeGreaterThan(86_000_000)
  }
}, 30_000)

it('takes a queued fault exactly once in the fleet', async () => {
  const { replicas, proxy } = await startFleet()
  const queued = await fetch(`${replicas[1]!.url}/__sandbox/scenarios`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      operation: 'createCustomer',
      status: 503,
      times: 2,
    }),
  })
  expect(queued.status).toBe(201)
  const answers = await Promise.all(
    Array.from({ length: 12 }, async (_, n) => {
      const response = await createCustomer(proxy.url, `Fault${n}`)
      return `${response.status} ${((await response.json()) as { code?: string }).code ?? ''}`
    }),
  )
  expect(answers.filter((a) => a === '503 simulated_failure')).toHaveLength(2)
  expect(answers.filter((a) => a.startsWith('201'))).toHaveLength(10)
  const left = await fetch(`${replicas[2]!.url}/__sandbox/scenarios`)
  expect(((await left.json()) as { scenarios: unknown[] }).scenarios).toEqual(
    [],
  )
}, 30_000)

it('counts rate limits across the fleet and keeps one ordered journal', async () => {
  const { replicas, proxy } = await startFleet(['--rate-limit', '5/1h'])
  const statuses: number[] = []
  for (let n = 0; n < 9; n++)
    statuses.push((await createCustomer(proxy.url, `Rate${n}`)).status)
  expect(statuses).toEqual([201, 201, 201, 201, 201, 429, 429, 429, 429])

  for (const replica of replicas) {
    const response = await fetch(`${replica.url}/__sandbox/requests`)
    const { requests } = (await response.json()) as {
      requests: { status: number }[]
    }
    // Newest first, whichever replica answered.
    expect(requests.map((entry) => entry.status)).toEqual(statuses.toReversed())
    const mine = await fetch(`${replica.url}/__sandbox/account/requests`, {
      headers: auth,
    })
    const own = (await mine.json()) as { requests: unknown[] }
    expect(own.requests).toHaveLength(9)
  }
}, 30_000)

it('answers 503 with Retry-After while Redis is gone, stays up, says degraded and recovers by itself', async () => {
  const { redis, replicas } = await startFleet()
  await redis.kill('SIGKILL')
  for (const replica of replicas) {
    const refused = await createCustomer(replica.url, 'Away')
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('5')
    expect(refused.headers.get('content-type')).toBe('application/problem+json')
    expect(((await refused.json()) as { code: string }).code).toBe(
      'storage_unavailable',
    )
    // Nothing from stale state either.
    expect((await fetch(`${replica.url}/__sandbox/state`)).status).toBe(503)
    const health = await fetch(`${replica.url}/__sandbox/health`)
    expect(health.status).toBe(503)
    expect(await health.json()).toMatchObject({ status: 'degraded' })
  }
  await redis.restart()
  for (const replica of replicas) {
    await healthy(replica.url)
    expect((await createCustomer(replica.url, 'Back')).status).toBe(201)
  }
  for (const replica of replicas) expect(replica.child.exitCode).toBeNull()
}, 30_000)

/** Waits (5 s at most) until a replica's health is ok again: it reconnects by itself. */
async function healthy(url: string): Promise<void> {
  let health = 503
  for (let tries = 0; tries < 100 && health !== 200; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    health = (await fetch(`${url}/__sandbox/health`)).status
  }
  expect(health).toBe(200)
}

/** Sends keyed creates from 8 loops until `stop()`; returns what was acknowledged. */
function load(url: () => string) {
  const acknowledged = new Map<string, string>()
  const run = { stopped: false, sent: 0 }
  const loops = Array.from({ length: 8 }, async () => {
    while (!run.stopped) {
      const key = `load-${run.sent++}`
      try {
        const response = await createCustomer(url(), `L${key}`, {
          'idempotency-key': key,
        })
        if (response.status === 201)
          acknowledged.set(key, ((await response.json()) as { id: string }).id)
      } catch {
        // A replica killed mid-answer: the retry below settles it.
      }
    }
  })
  return {
    acknowledged,
    run,
    async stop() {
      run.stopped = true
      await Promise.all(loops)
    },
  }
}

/** Retries every key sent: acknowledged ones replay, the rest make one record each. */
async function retryAll(
  url: string,
  traffic: ReturnType<typeof load>,
): Promise<void> {
  for (let n = 0; n < traffic.run.sent; n++) {
    const key = `load-${n}`
    const response = await createCustomer(url, `L${key}`, {
      'idempotency-key': key,
    })
    expect(response.status).toBe(201)
    const first = traffic.acknowledged.get(key)
    if (first !== undefined)
      expect(((await response.json()) as { id: string }).id).toBe(first)
  }
  const names = (await customerNames(url)).filter((n) => n.startsWith('Lload-'))
  expect(new Set(names).size).toBe(names.length)
  expect(names).toHaveLength(traffic.run.sent)
}

const waitFor = async (check: () => boolean) => {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5))
}

it(
  'loses no acknowledged 201 and duplicates no keyed retry when a replica is killed -9 under load',
  { timeout: 60_000 },
  async () => {
    const { replicas, proxy } = await startFleet()
    const traffic = load(() => proxy.url)
    await waitFor(() => traffic.acknowledged.size >= 60)
    replicas[0]!.child.kill('SIGKILL')
    await waitFor(() => traffic.acknowledged.size >= 120)
    await traffic.stop()
    await retryAll(replicas[1]!.url, traffic)
  },
)

it(
  'loses no acknowledged 201 and duplicates no keyed retry when Redis (appendfsync always) is killed -9 under load and restarted on its folder',
  { timeout: 60_000 },
  async () => {
    const { redis, replicas } = await startFleet([], 'always')
    let next = 0
    const traffic = load(() => replicas[next++ % 3]!.url)
    await waitFor(() => traffic.acknowledged.size >= 100)
    await redis.kill('SIGKILL')
    await traffic.stop()
    await redis.restart()
    await healthy(replicas[2]!.url)
    await retryAll(replicas[2]!.url, traffic)
  },
)

it('exits non-zero with one line naming the URL when Redis cannot be reached at start', async () => {
  const cli = runCli(['--port', '0', '--store', 'redis://127.0.0.1:1/0'])
  expect(await cli.exited).toBe(1)
  const lines = cli.stderr().trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toMatch(
    /Cannot reach the Redis store at redis:\/\/127\.0\.0\.1:1\/0/,
  )
}, 30_000)
