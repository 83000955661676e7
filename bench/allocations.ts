/**
 * `npm run bench:allocations`: the bytes the server's JavaScript heap
 * allocates per create, `POST /v1/customers` and `POST /v2/tokens`, in memory
 * and on Redis, each set against the floor's (bench/floor-server.ts) measured
 * in the same run. Allocation is what sets how often the young generation is
 * collected under load, and so the p99; unlike timing, it hardly varies with
 * what else the machine runs. `--profile` also prints, for each server, the
 * functions that allocate most (a sampling heap profile that counts the
 * objects young-generation collections free).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { Agent, request } from 'node:http'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startRedisServer } from '../examples/shared-sandbox/redis.mjs'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import { serverArgs } from './_server-args.ts'

const PROFILE = process.argv.includes('--profile')
// `--only=tokens`: only the servers whose label has that text (and the floor).
const ONLY = process.argv.find((arg) => arg.startsWith('--only='))?.slice(7)
const WARMUP = Number(process.env.ALLOC_WARMUP ?? 4000)
const CREATES = Number(process.env.ALLOC_CREATES ?? 2000)
const WINDOWS = Number(process.env.ALLOC_WINDOWS ?? 3)
const CONNECTIONS = 32
const BODIES = {
  '/v1/customers': { name: 'Ada Lovelace', email: 'ada@example.com' },
  '/v2/tokens': { scopes: ['customers:read'], expires_in: 3600 },
}
type Path = keyof typeof BODIES

interface Server {
  url: string
  child: ChildProcess
  ask(message: string): Promise<Record<string, unknown>>
}

function startServer(args: string[]): Promise<Server> {
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', './bench/allocation-probe.mjs', ...args],
    { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] },
  )
  const ask = (message: string) =>
    new Promise<Record<string, unknown>>((resolve) => {
      child.once('message', (reply) =>
        resolve(reply as Record<string, unknown>),
      )
      child.send(message)
    })
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk
      const match = /http:\/\/127\.0\.0\.1:\d+/.exec(out)
      if (match) resolve({ url: match[0], child, ask })
    })
    child.on('exit', (code) =>
      reject(new Error(`server exited with ${code}: ${out}`)),
    )
  })
}

/** `count` creates over `CONNECTIONS` keep-alive connections; all must be 201. */
async function drive(url: string, path: Path, count: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS })
  const body = JSON.stringify(BODIES[path])
  let left = count
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        `${url}${path}`,
        {
          agent,
          method: 'POST',
          headers: {
            authorization: `Bearer ${DEMO_KEY_ONE}`,
            'content-type': 'application/json',
          },
        },
        (res) => {
          res.resume()
          res.on('end', () =>
            res.statusCode === 201
              ? resolve()
              : reject(new Error(`${path} answered ${res.statusCode}`)),
          )
        },
      )
      req.on('error', reject)
      req.end(body)
    })
  const loop = async () => {
    while (left > 0) {
      left--
      await one()
    }
  }
  await Promise.all(Array.from({ length: CONNECTIONS }, loop))
  agent.destroy()
}

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number }
  selfSize: number
  children: ProfileNode[]
}

/** The functions that allocated most, by self size, per create. */
function topAllocators(root: ProfileNode, creates: number): string[] {
  const bySite = new Map<string, number>()
  const walk = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame
    const site = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules\/)?/, '')}:${lineNumber + 1}`
    bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize)
    node.children.forEach(walk)
  }
  walk(root)
  return [...bySite]
    .toSorted((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(
      ([site, bytes]) =>
        `${(bytes / creates).toFixed(0).padStart(7)} B  ${site}`,
    )
}

/** The median bytes per create over `WINDOWS` windows, after a warm-up. */
async function measure(
  label: string,
  args: string[],
  path: Path,
): Promise<number> {
  if (ONLY && label !== 'floor' && !label.includes(ONLY)) return Number.NaN
  const server = await startServer(args)
  try {
    await drive(server.url, path, WARMUP)
    const perCreate: number[] = []
    let gcs = 0
    for (let window = 0; window < WINDOWS; window++) {
      await server.ask('start')
      await drive(server.url, path, CREATES)
      const stop = await server.ask('stop')
      perCreate.push(Number(stop.allocated) / CREATES)
      gcs += Number(stop.gcs)
    }
    if (PROFILE) {
      await server.ask('profile-start')
      await drive(server.url, path, CREATES)
      const { profile } = await server.ask('profile-stop')
      console.log(`\n${label}: top allocating functions, bytes per create`)
      const { head } = profile as { head: ProfileNode }
      console.log(topAllocators(head, CREATES).join('\n'))
      // For Chrome DevTools' Memory tab, or a closer look at the callers.
      await mkdir('bench/results', { recursive: true })
      await writeFile(
        `bench/results/${label.replace(/\W+/g, '-')}.heapprofile`,
        JSON.stringify(profile),
      )
    }
    const median = perCreate.toSorted((a, b) => a - b)[perCreate.length >> 1]!
    console.log(
      `${label.padEnd(34)} ${(median / 1024).toFixed(1).padStart(6)} KB/create (windows ${perCreate.map((b) => (b / 1024).toFixed(1)).join(', ')}; ${(gcs / WINDOWS / (CREATES / 1000)).toFixed(1)} collections per 1000)`,
    )
    return median
  } finally {
    server.child.kill('SIGKILL')
  }
}

const floorServer = ['--import', 'tsx', 'bench/floor-server.ts']

await measure('bare node:http echo', ['bench/bare-server.mjs'], '/v1/customers')
const floor = await measure('floor', floorServer, '/v1/customers')
const results: [string, number][] = []
for (const path of Object.keys(BODIES) as Path[]) {
  results.push([
    `POST ${path} in memory`,
    await measure(`POST ${path} in memory`, serverArgs(), path),
  ])
}
if (spawnSync('redis-server', ['--version']).error) {
  console.log('redis-server is not installed: the Redis figures are skipped')
} else {
  const dir = await mkdtemp(join(tmpdir(), 'bench-alloc-redis-'))
  const redis = await startRedisServer({ dir, appendfsync: 'everysec' })
  try {
    for (const path of Object.keys(BODIES) as Path[]) {
      spawnSync('redis-cli', ['-p', String(redis.port), 'flushall'])
      results.push([
        `POST ${path} on Redis`,
        await measure(
          `POST ${path} on Redis`,
          serverArgs('--store', redis.url),
          path,
        ),
      ])
    }
  } finally {
    await redis.stop('SIGKILL')
    await rm(dir, { recursive: true, force: true })
  }
}
console.log(
  `\nbytes per create against the floor's (${(floor / 1024).toFixed(1)} KB):`,
)
for (const [label, bytes] of results) {
  if (Number.isNaN(bytes)) continue
  console.log(`  ${label.padEnd(32)} ${(bytes / floor).toFixed(2)}×`)
}
