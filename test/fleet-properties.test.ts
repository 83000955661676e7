// Runs once: every server here names its own store.
import fc from 'fast-check'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE, DEMO_KEY_TWO } from '../fixtures/demo-keys.ts'
import { startRedis } from './_redis.ts'
import { startServer } from './_servers.ts'

// Three replicas on one Redis are one sandbox whatever calls reach them and
// however those interleave: fast-check sends waves of concurrent calls, each
// to a replica of its choosing (creates, keyed retries, tokens, faults,
// account clocks, snapshots, restores, resets), to replicas that keep two
// accounts' records at most (so that they load and let go of accounts as
// they go), and then checks what a user of the fleet can check. A failure
// prints the calls, wave by wave, and the seed that replays them.

const KEYS = [DEMO_KEY_ONE, DEMO_KEY_TWO] as const
const REPLICAS = 3
// FLEET_RUNS=N runs more, to hunt rather than guard; FLEET_SEED and
// FLEET_PATH (from a failure's report) replay one.
const RUNS = Number(process.env.FLEET_RUNS ?? 25)
const REPLAY = process.env.FLEET_SEED
  ? { seed: Number(process.env.FLEET_SEED), path: process.env.FLEET_PATH }
  : {}

type Call =
  | { kind: 'create'; replica: number; account: number; key?: number }
  | { kind: 'token'; replica: number; account: number }
  | { kind: 'withToken'; replica: number }
  | { kind: 'fault'; replica: number; times: number }
  | { kind: 'clock'; replica: number; account: number; seconds: number }
  | { kind: 'snapshot'; replica: number }
  | { kind: 'restore'; replica: number }
  | { kind: 'reset'; replica: number }

const replica = fc.integer({ min: 0, max: REPLICAS - 1 })
const anAccount = fc.integer({ min: 0, max: KEYS.length - 1 })
const call: fc.Arbitrary<Call> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      {
        kind: fc.constant('create' as const),
        replica,
        account: anAccount,
        key: fc.integer({ min: 0, max: 2 }),
      },
      { requiredKeys: ['kind', 'replica', 'account'] },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('token' as const),
      replica,
      account: anAccount,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('withToken' as const), replica }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('fault' as const),
      replica,
      times: fc.integer({ min: 1, max: 2 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('clock' as const),
      replica,
      account: anAccount,
      seconds: fc.integer({ min: 1, max: 60 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('snapshot' as const), replica }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('restore' as const), replica }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('reset' as const), replica }),
  },
)
const waves = fc.array(fc.array(call, { minLength: 1, maxLength: 8 }), {
  minLength: 1,
  maxLength: 8,
})

/** What one call was answered. */
interface Answer {
  call: Call
  wave: number
  status: number
  code?: string
  detail?: string
  /** The customer a create was answered with (made or replayed). */
  id?: string
  replayed: boolean
  /** The token a `token` call minted. */
  token?: string
}

/** Whether a call replaces the records as a whole. */
const replaces = (c: Call) => c.kind === 'reset' || c.kind === 'restore'

async function send(
  urls: string[],
  c: Call,
  n: number,
  tokens: string[],
): Promise<Omit<Answer, 'call' | 'wave'>> {
  const url = urls[c.replica]!
  const post = (
    path: string,
    body: unknown,
    headers: Record<string, string> = {},
  ) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
  let response: Response
  switch (c.kind) {
    case 'create':
      response =
        c.key === undefined
          ? await post(
              '/v1/customers',
              { name: `P${n}`, email: `p${n}@example.com` },
              bearer(KEYS[c.account]!),
            )
          : // One body per key, so that every retry of it is the same call.
            await post(
              '/v1/customers',
              {
                name: `Keyed${c.account}-${c.key}`,
                email: `keyed${c.account}-${c.key}@example.com`,
              },
              { ...bearer(KEYS[c.account]!), 'idempotency-key': `k${c.key}` },
            )
      break
    case 'token':
      response = await post(
        '/v2/tokens',
        { scopes: ['customers:write'] },
        bearer(KEYS[c.account]!),
      )
      break
    case 'withToken':
      if (tokens.length === 0) return { status: 0, replayed: false }
      response = await post(
        '/v1/customers',
        { name: `T${n}`, email: `t${n}@example.com` },
        bearer(tokens.at(-1)!),
      )
      break
    case 'fault':
      response = await post('/__sandbox/scenarios', {
        operation: 'createCustomer',
        status: 503,
        times: c.times,
      })
      break
    case 'clock':
      response = await post(
        '/__sandbox/account/clock',
        { advance_seconds: c.seconds },
        bearer(KEYS[c.account]!),
      )
      break
    case 'snapshot':
      response = await post('/__sandbox/snapshots', { name: 'p' })
      break
    case 'restore':
      response = await post('/__sandbox/snapshots/restore', { name: 'p' })
      break
    case 'reset':
      response = await post('/__sandbox/reset', {})
      break
  }
  const body = (await response.json()) as {
    id?: string
    code?: string
    detail?: string
    token?: string
  }
  return {
    status: response.status,
    ...(body.code !== undefined && { code: body.code, detail: body.detail }),
    ...(response.status === 201 &&
      (c.kind === 'create' || c.kind === 'withToken') &&
      body.id !== undefined && { id: body.id }),
    ...(body.token !== undefined && { token: body.token }),
    replayed: response.headers.get('idempotent-replayed') === 'true',
  }
}

/** What a replica shows of the fleet's state once every call is answered. */
async function seen(url: string) {
  const state = (await (await fetch(`${url}/__sandbox/state`)).json()) as {
    customers: { id: string; name: string }[]
    tokens: { id: string }[]
  }
  const scenarios = (await (
    await fetch(`${url}/__sandbox/scenarios`)
  ).json()) as {
    scenarios: { remaining: number }[]
  }
  const clocks = await Promise.all(
    KEYS.map(async (key) => {
      const clock = (await (
        await fetch(`${url}/__sandbox/account/clock`, {
          headers: { authorization: `Bearer ${key}` },
        })
      ).json()) as { now: string; frozen: boolean; own: boolean }
      // A clock nobody moved runs with the wall clock: only a moved one is
      // the same instant on every replica.
      return clock.own ? clock.now : 'running'
    }),
  )
  return {
    customers: state.customers
      .map((customer) => `${customer.id} ${customer.name}`)
      .toSorted(),
    tokens: state.tokens.map((token) => token.id).toSorted(),
    queued: scenarios.scenarios.map((scenario) => scenario.remaining),
    clocks,
  }
}

it('keeps three replicas one sandbox under any waves of concurrent calls: every 201 served by all, keyed retries once, faults taken once, snapshots only of what was stored', async () => {
  const redis = await startRedis()
  let run = 0
  await fc.assert(
    fc.asyncProperty(waves, async (plan) => {
      run++
      const options = {
        seed: 1,
        customersPerAccount: 0,
        store: {
          url: redis.url,
          namespace: `property-${run}`,
          cacheRecords: 2,
        },
      }
      const replicas = []
      for (let r = 0; r < REPLICAS; r++)
        replicas.push(await startServer(options))
      const urls = replicas.map((r) => r.url)
      try {
        const answers: Answer[] = []
        const tokens: string[] = []
        let n = 0
        for (const [wave, calls] of plan.entries()) {
          const answered = await Promise.all(
            calls.map(async (c) => ({
              call: c,
              wave,
              ...(await send(urls, c, n++, tokens)),
            })),
          )
          answers.push(...answered)
          for (const a of answered) if (a.token) tokens.push(a.token)
        }
        const replacedFrom = (wave: number) =>
          answers.some((a) => a.wave >= wave && replaces(a.call))
        const wavesWith = new Set(
          answers.filter((a) => replaces(a.call)).map((a) => a.wave),
        )

        // Every answer is one the contract promises for the call.
        for (const a of answers) {
          const where = `${JSON.stringify(a.call)} in wave ${a.wave}: ${a.status} ${a.code ?? ''} ${a.detail ?? ''}`
          if (a.status === 0) continue
          if (a.status === 503 && a.code === 'simulated_failure') {
            expect(['create', 'withToken'], where).toContain(a.call.kind)
            continue
          }
          // Overtaken by a reset or a restore answered meanwhile: said, and retried by the client.
          if (a.status === 503 && a.code === 'storage_unavailable') {
            expect(wavesWith.has(a.wave), where).toBe(true)
            continue
          }
          if (a.status === 409 && a.code === 'idempotency_in_progress') {
            const same = answers.filter(
              (b) =>
                b !== a &&
                b.wave === a.wave &&
                b.call.kind === 'create' &&
                a.call.kind === 'create' &&
                b.call.key === a.call.key &&
                b.call.account === a.call.account,
            )
            expect(same.length, where).toBeGreaterThan(0)
            continue
          }
          if (a.status === 401 && a.call.kind === 'withToken') {
            // The token went with a reset or a restore.
            expect(wavesWith.size, where).toBeGreaterThan(0)
            continue
          }
          if (a.status === 404 && a.call.kind === 'restore') {
            // No snapshot was taken before it (or beside it).
            expect(
              answers.some(
                (b) =>
                  b.call.kind === 'snapshot' &&
                  b.wave < a.wave &&
                  b.status === 201,
              ),
              where,
            ).toBe(false)
            continue
          }
          const expected = {
            create: 201,
            token: 201,
            withToken: 201,
            fault: 201,
            snapshot: 201,
            clock: 200,
            restore: 200,
            reset: 200,
          }[a.call.kind]
          expect(a.status, where).toBe(expected)
        }

        const views = await Promise.all(urls.map(seen))
        // One sandbox: every replica shows the same.
        expect(views[1], JSON.stringify(views)).toEqual(views[0])
        expect(views[2], JSON.stringify(views)).toEqual(views[0])
        const held = new Set(
          views[0]!.customers.map((line) => line.split(' ')[0]),
        )
        const answeredIds = new Set(
          answers.flatMap((a) => (a.id ? [a.id] : [])),
        )
        // Nothing is there that no call was answered 201 for.
        for (const id of held)
          expect(
            answeredIds,
            `customer ${id} of ${JSON.stringify(views[0]!.customers)}; answers ${JSON.stringify(answers)}`,
          ).toContain(id)
        // A 201 that no reset or restore came with or after is served by every replica.
        for (const a of answers)
          if (a.id && !replacedFrom(a.wave))
            expect(held, JSON.stringify(a)).toContain(a.id)

        if (wavesWith.size === 0) {
          // One record per Idempotency-Key, whichever replicas its retries reached.
          for (const [account, key] of [0, 1].flatMap((ac) =>
            [0, 1, 2].map((k) => [ac, k]),
          )) {
            const ids = new Set(
              answers
                .filter(
                  (a) =>
                    a.id &&
                    a.call.kind === 'create' &&
                    a.call.account === account &&
                    a.call.key === key,
                )
                .map((a) => a.id),
            )
            expect(ids.size).toBeLessThanOrEqual(1)
          }
          // Each queued fault taken once in the fleet: taken plus left is what was queued.
          const queued = answers
            .filter((a) => a.call.kind === 'fault' && a.status === 201)
            .reduce((sum, a) => sum + (a.call as { times: number }).times, 0)
          const taken = answers.filter(
            (a) => a.code === 'simulated_failure',
          ).length
          const left = views[0]!.queued.reduce(
            (sum, remaining) => sum + remaining,
            0,
          )
          expect(taken + left).toBe(queued)
        }
      } finally {
        await Promise.all(replicas.map((r) => r.close()))
      }
    }),
    {
      numRuns: RUNS,
      ...REPLAY,
    },
  )
}, 240_000)
