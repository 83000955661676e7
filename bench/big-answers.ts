/**
 * `npm run build && node --import tsx bench/big-answers.ts [export|state|requests] [clients] [customers] [before]`:
 * many clients reading one large admin answer each, and the health check
 * beside them (issue 29: 500 concurrent `GET /__sandbox/export` at 5,000
 * customers per account held health for about 15 s). The built server
 * (`dist/bin.js`) holds `customers` per fixture account (default 5,000) and
 * a full journal (1,000 entries); `clients` connections (default 500) each
 * ask for `GET /__sandbox/<path>` at once and read the whole answer. Every
 * 100 ms a health check goes on a fresh connection (as a load balancer
 * asks) and one on a connection opened before the load (what the event
 * loop alone makes it wait); the slowest of each during the load are the
 * figures, the same server idle the baseline. With `before`, the path of
 * another build's `bin.js` (an older commit's, built into a folder under
 * node_modules so that it finds its dependencies), both are measured in
 * the same run, one after the other, and the ratios of the new to the old
 * are printed.
 *
 * Figures: docs/operations/reliability.md (Large admin answers).
 * What a fresh connection still waits is node's: it accepts one waiting
 * connection per turn of its event loop, oldest first, so a health check
 * that connects behind 500 readers waits some 500 turns.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { connect } from 'node:net'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'

const path = process.argv[2] ?? 'export'
const clients = Number(process.argv[3] ?? 500)
const customers = Number(process.argv[4] ?? 5000)
const before = process.argv[5]
const after = fileURLToPath(new URL('../dist/bin.js', import.meta.url))

/** Starts a built server; resolves once it prints its URL. */
function startServer(
  bin: string,
): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [
      bin,
      '--port',
      '0',
      '--quiet',
      '--seed',
      '1',
      '--customers',
      String(customers),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk
      const match = /http:\/\/127\.0\.0\.1:(\d+)/.exec(out)
      if (match) resolve({ port: Number(match[1]), child })
    })
    child.on('exit', (code) =>
      reject(new Error(`server exited with ${code}: ${out}`)),
    )
  })
}

/**
 * Sends one request on a fresh connection that closes after the answer, and
 * reads all of it; resolves with its status line, its size and the ms it took.
 */
function ask(
  port: number,
  target: string,
): Promise<{ status: string; bytes: number; ms: number; whole: boolean }> {
  return new Promise((resolve) => {
    const started = performance.now()
    const socket = connect(port, '127.0.0.1')
    let bytes = 0
    let head = ''
    let tail = ''
    socket.on('data', (chunk: Buffer) => {
      if (head.length < 16) head += chunk.toString('latin1', 0, 16)
      bytes += chunk.length
      tail = (
        tail + chunk.toString('latin1', Math.max(0, chunk.length - 8))
      ).slice(-8)
    })
    socket.on('error', () => {})
    socket.on('close', () =>
      resolve({
        status: head.slice(9, 12),
        bytes,
        ms: performance.now() - started,
        // A chunked answer that ended, not one cut short.
        whole: tail.endsWith('0\r\n\r\n'),
      }),
    )
    socket.write(
      `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
    )
  })
}

/**
 * Health every 100 ms while `during` runs, each on a fresh connection (as a
 * load balancer asks) and on one connection opened before (which no queue
 * of connections waiting to be accepted delays); resolves with each one's
 * ms, the ones still open at their wait so far.
 */
async function sampleHealth(
  port: number,
  start: () => Promise<unknown>,
): Promise<{ fresh: number[]; open: number[] }> {
  const fresh: number[] = []
  const waiting = new Set<number>()
  const kept = connect(port, '127.0.0.1')
  kept.on('error', () => {})
  await once(kept, 'connect')
  // Answers on one connection come in order: each is the oldest asked.
  const asked: number[] = []
  const onOpen: number[] = []
  kept.on('data', (chunk: Buffer) => {
    // One chunk may carry several answers (a small one each).
    for (const _ of chunk.toString('latin1').matchAll(/HTTP\/1\.1 /g)) {
      const started = asked.shift()
      if (started !== undefined) onOpen.push(performance.now() - started)
    }
  })
  // Accepted before the load begins: no queue is ahead of it.
  kept.write('GET /__sandbox/health HTTP/1.1\r\nHost: localhost\r\n\r\n')
  await once(kept, 'data')
  const ended = start().then(() => true)
  const pending: Promise<void>[] = []
  for (let over = false; !over;) {
    const started = performance.now()
    waiting.add(started)
    pending.push(
      ask(port, '/__sandbox/health').then(({ ms }) => {
        waiting.delete(started)
        fresh.push(ms)
      }),
    )
    asked.push(started)
    kept.write('GET /__sandbox/health HTTP/1.1\r\nHost: localhost\r\n\r\n')
    over = await Promise.race([
      ended,
      new Promise<false>((resolve) => setTimeout(() => resolve(false), 100)),
    ])
  }
  // @note A check still waiting when the load ends waited at least this long.
  const now = performance.now()
  const late = [...waiting].map((started) => now - started)
  const lateOnOpen = asked.map((started) => now - started)
  await Promise.all(pending)
  kept.destroy()
  return { fresh: [...fresh, ...late], open: [...onOpen, ...lateOnOpen] }
}

const worst = (values: number[]): number => Math.round(Math.max(0, ...values))
const median = (values: number[]): number => {
  const sorted = values.toSorted((a, b) => a - b)
  return Math.round(sorted[sorted.length >> 1] ?? 0)
}

/** One server: idle health, then the load with health beside it. */
async function measure(bin: string) {
  const { port, child } = await startServer(bin)
  const cpuAt = (): Promise<number> =>
    import('node:fs/promises').then(async ({ readFile }) => {
      const stat = await readFile(`/proc/${child.pid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      // utime + stime, in clock ticks of 10 ms.
      return (Number(fields[11]) + Number(fields[12])) * 10
    })
  // A journal as full as it gets by default (1,000 entries): the requests
  // read is all journal, an export carries it too.
  for (let i = 0; i < 1000; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, () =>
        fetch(`http://127.0.0.1:${port}/v1/customers?limit=1`, {
          headers: { authorization: `Bearer ${DEMO_KEY_ONE}` },
        }).then((response) => response.arrayBuffer()),
      ),
    )
  }
  // Warm up once, as a first client would.
  await ask(port, `/__sandbox/${path}`)
  const idle = await sampleHealth(
    port,
    () => new Promise((resolve) => setTimeout(resolve, 2000)),
  )
  const cpuBefore = await cpuAt()
  let started = 0
  let load: Promise<Awaited<ReturnType<typeof ask>>[]> | undefined
  const health = await sampleHealth(port, () => {
    started = performance.now()
    load = Promise.all(
      Array.from({ length: clients }, () => ask(port, `/__sandbox/${path}`)),
    )
    return load
  })
  const answers = await load!
  const loadMs = Math.round(performance.now() - started)
  const cpuMs = (await cpuAt()) - cpuBefore
  child.kill()
  await once(child, 'exit')
  return {
    answers: answers.length,
    answersOk: answers.filter((a) => a.status === '200' && a.whole).length,
    bytesPerAnswer: answers[0]?.bytes ?? 0,
    idleHealthWorstMs: worst(idle.fresh),
    healthChecks: health.fresh.length,
    healthMedianMs: median(health.fresh),
    healthWorstMs: worst(health.fresh),
    // The event loop's share: what a client already connected waited.
    openConnectionHealthWorstMs: worst(health.open),
    lastAnswerMs: loadMs,
    serverCpuMs: cpuMs,
  }
}

type Figures = Awaited<ReturnType<typeof measure>>
const results: { before?: Figures; after: Figures } = {
  ...(before && { before: await measure(before) }),
  after: await measure(after),
}
const ratio = (
  key:
    | 'healthWorstMs'
    | 'openConnectionHealthWorstMs'
    | 'lastAnswerMs'
    | 'serverCpuMs',
) =>
  results.before
    ? Number((results.after[key] / Math.max(1, results.before[key])).toFixed(2))
    : undefined
console.log(
  JSON.stringify(
    {
      path: `/__sandbox/${path}`,
      clients,
      customersPerAccount: customers,
      ...results,
      ...(results.before && {
        afterToBefore: {
          healthWorst: ratio('healthWorstMs'),
          openConnectionHealthWorst: ratio('openConnectionHealthWorstMs'),
          lastAnswer: ratio('lastAnswerMs'),
          serverCpu: ratio('serverCpuMs'),
        },
      }),
      // Other processes share the CPU: wall-clock figures grow with it.
      loadAverage: loadavg()[0]!.toFixed(1),
    },
    null,
    2,
  ),
)
