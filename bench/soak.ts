/**
 * `npm run soak` (10 minutes) or `npm run soak -- --ci` (1 minute): the server
 * under a steady, unthrottled load on loopback, bounded in time. The mix
 * replays a fixed pool of Idempotency-Keys, fails validation and
 * authentication, and reads the journal, so the data stops growing after the
 * warm-up and what is left to grow is the server's own state: the journal,
 * the idempotency store, the rate-limit windows. Passes when no request
 * errors, none answers 5xx, and RSS stays flat after the warm-up.
 */
import { spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import autocannon from 'autocannon'
import { DEMO_KEY_ONE, DEMO_KEY_TWO } from '../fixtures/demo-keys.ts'

const seconds = process.argv.includes('--ci')
  ? 60
  : Number(process.env.SOAK_SECONDS ?? 600)
const POOL = 500

// Logging on, as the CLI runs without --quiet: the request log (onLog) is
// part of what must stay bounded. Its lines are counted, not kept.
const child = spawn(
  process.execPath,
  [
    'dist/bin.js',
    '--port',
    '0',
    '--log-format',
    'json',
    '--rate-limit',
    '100000/1s',
  ],
  {
    stdio: ['ignore', 'pipe', 'inherit'],
  },
)
let logLines = 0
const url = await new Promise<string>((resolve, reject) => {
  let out = ''
  let found = false
  child.stdout!.on('data', (chunk: Buffer) => {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1))
      logLines++
    if (found) return
    out += chunk
    const match = /http:\/\/127\.0\.0\.1:\d+/.exec(out)
    if (match) {
      found = true
      out = ''
      resolve(match[0])
    }
  })
  child.on('exit', (code) =>
    reject(new Error(`the server exited with ${code}`)),
  )
})

const rss = async (): Promise<number> => {
  const status = await readFile(`/proc/${child.pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
}
const samples: { at: number; mb: number }[] = []
const started = Date.now()
const sampler = setInterval(() => {
  rss().then(
    (mb) => samples.push({ at: (Date.now() - started) / 1000, mb }),
    () => {},
  )
}, 1000)

let n = 0
const json = {
  authorization: `Bearer ${DEMO_KEY_ONE}`,
  'content-type': 'application/json',
}
const result = await autocannon({
  url,
  connections: 32,
  duration: seconds,
  requests: [
    {
      method: 'POST',
      path: '/v1/customers',
      setupRequest: (request) => {
        const i = n++ % POOL
        return {
          ...request,
          headers: { ...json, 'idempotency-key': `soak-${i}` },
          body: JSON.stringify({
            name: `Soak ${i}`,
            email: `soak${i}@example.com`,
          }),
        }
      },
    },
    {
      method: 'POST',
      path: '/v2/tokens',
      setupRequest: (request) => ({
        ...request,
        headers: {
          authorization: `Bearer ${DEMO_KEY_TWO}`,
          'idempotency-key': `soak-token-${n % POOL}`,
        },
        body: JSON.stringify({ scopes: ['customers:read'] }),
      }),
    },
    {
      method: 'POST',
      path: '/v1/customers',
      headers: json,
      body: '{"name":""}',
    },
    { method: 'POST', path: '/v1/customers', body: '{}' },
    { method: 'GET', path: '/__sandbox/requests?limit=5' },
  ],
})
clearInterval(sampler)
const state = await (await fetch(`${url}/__sandbox/state`)).json()
child.kill('SIGKILL')

const serverErrors = Object.entries(result.statusCodeStats ?? {})
  .filter(([code]) => Number(code) >= 500)
  .reduce((sum, [, stat]) => sum + (stat.count ?? 0), 0)
const median = (values: number[]): number => {
  const sorted = values.toSorted((a, b) => a - b)
  return sorted[sorted.length >> 1] ?? 0
}
const warm = samples
  .filter((s) => s.at > seconds * 0.25 && s.at <= seconds * 0.5)
  .map((s) => s.mb)
const late = samples.filter((s) => s.at > seconds * 0.75).map((s) => s.mb)
const growth = median(late) / median(warm)
const flat = growth <= 1.1
const errors = result.errors + result.timeouts + serverErrors

console.log(
  `soak: ${seconds} s at ${result.requests.average.toFixed(0)} req/s (${result.requests.total} requests, 32 connections)`,
)
console.log(
  `  errors ${errors} (connection ${result.errors}, timeouts ${result.timeouts}, 5xx ${serverErrors})`,
)
console.log(
  `  RSS after warm-up ${median(warm).toFixed(0)} MB, last quarter ${median(late).toFixed(0)} MB: ${growth.toFixed(3)}× (flat when ≤ 1.10×) ${flat ? 'holds' : 'MISSES'}`,
)
console.log(
  `  data at the end: ${state.customers.length} customers, ${state.tokens.length} tokens`,
)
console.log(
  `  logging on: ${logLines} log lines; RSS first ${samples[0]?.mb.toFixed(0)} MB, last ${samples.at(-1)?.mb.toFixed(0)} MB`,
)
if (errors > 0 || !flat) process.exitCode = 1
