/**
 * `npm run build && node --import tsx bench/verify-rss.ts`: the peak RSS of
 * `verify` and `record` (the built CLI, as users run it) against each
 * misbehaving service of issue 29, all on loopback: a gzip bomb (2 GiB of
 * JSON whitespace), 50 MB and 120 MB answers, an endless body, a redirect
 * loop and a 307 to another origin. Prints one line per run; each should stay
 * under 200 MB (`BUDGET_MB`). Exits 1 when one does not.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import { createMisbehaving, type Misbehaviour } from '../test/_misbehaving.ts'

const BUDGET_MB = 200
const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url))
const PROBE = fileURLToPath(new URL('./max-rss.mjs', import.meta.url))

interface Case {
  name: string
  how: Misbehaviour
  /** Calls a client makes through `record`. */
  calls: number
}

const CASES: Case[] = [
  {
    name: 'gzip bomb, 2 GiB inflated',
    how: { kind: 'gzip-bomb', decodedMb: 2048 },
    calls: 1,
  },
  { name: '50 MB answers', how: { kind: 'large', mb: 50 }, calls: 12 },
  { name: '120 MB answers', how: { kind: 'large', mb: 120 }, calls: 6 },
  { name: 'endless body', how: { kind: 'endless' }, calls: 2 },
  { name: 'redirect loop (302)', how: { kind: 'redirect-loop' }, calls: 20 },
  {
    name: '307 to another origin',
    how: { kind: 'redirect', location: '' },
    calls: 20,
  },
]

/** Runs the CLI with `args` until `until` resolves (or it exits); gives its peak RSS in MB. */
async function peakOf(
  args: string[],
  until?: (stdout: () => string) => Promise<void>,
): Promise<{ mb: number; stdout: string; code: number | null }> {
  const child = spawn(process.execPath, ['--import', PROBE, BIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  })
  let stdout = ''
  let stderr = ''
  child.stdout
    .setEncoding('utf8')
    .on('data', (chunk: string) => (stdout += chunk))
  child.stderr
    .setEncoding('utf8')
    .on('data', (chunk: string) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', resolve),
  )
  if (until) {
    await until(() => stdout)
    child.kill('SIGINT')
  }
  const code = await exited
  const kb = Number(/max-rss-kb=(\d+)/.exec(stderr)?.[1])
  return { mb: Math.round(kb / 1024), stdout, code }
}

const waitFor = async (
  read: () => string,
  pattern: RegExp,
): Promise<RegExpMatchArray> => {
  for (;;) {
    const match = pattern.exec(read())
    if (match) return match
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Reads an answer to its end without keeping it. */
async function drain(response: Response): Promise<number> {
  let bytes = 0
  const reader = response.body?.getReader()
  const started = performance.now()
  for (;;) {
    const read = await reader?.read().catch(() => undefined)
    if (!read || read.done) return bytes
    bytes += read.value.byteLength
    // The endless body: enough read to show that the proxy streams it.
    if (performance.now() - started > 3000) {
      await reader?.cancel().catch(() => undefined)
      return bytes
    }
  }
}

const folder = await mkdtemp(join(tmpdir(), 'cts-rss-'))
const elsewhere = await createMisbehaving({ kind: 'large', mb: 0 })
let over = false
const line = (what: string, name: string, mb: number, note: string) => {
  if (mb >= BUDGET_MB) over = true
  console.log(
    `${what.padEnd(7)} ${name.padEnd(27)} peak RSS ${String(mb).padStart(4)} MB  ${note}`,
  )
}
try {
  for (const kase of CASES) {
    const { name, how, calls } = kase
    const service = await createMisbehaving(
      how.kind === 'redirect'
        ? { ...how, location: `${elsewhere.url}/v1/customers` }
        : how,
    )
    try {
      const verify = await peakOf([
        'verify',
        '--target',
        service.url,
        '--key',
        DEMO_KEY_ONE,
        '--rate',
        '50',
      ])
      const said =
        /The service misbehaved: (.*)/.exec(verify.stdout)?.[1] ??
        'no misbehaviour reported'
      line(
        'verify',
        name,
        verify.mb,
        `exit ${verify.code}; the service got ${service.requests} requests; ${said.slice(0, 90)}`,
      )

      // @note One file per case: record never replaces one, and two cases share a kind.
      const file = join(folder, `${CASES.indexOf(kase)}-${how.kind}.jsonl`)
      let received = 0
      const record = await peakOf(
        [
          'record',
          '--target',
          service.url,
          '--port',
          '0',
          '--out',
          file,
          '--timeout',
          '5000',
        ],
        async (stdout) => {
          const [, url] = await waitFor(stdout, /through (http:\/\/\S+)/)
          for (let i = 0; i < calls; i++) {
            const answer = await fetch(`${url}/v1/customers`, {
              method: 'POST',
              headers: {
                authorization: `Bearer ${DEMO_KEY_ONE}`,
                'content-type': 'application/json',
              },
              body: '{"name":"Ada","email":"ada@example.com"}',
              redirect: 'manual',
            })
            received += await drain(answer)
          }
        },
      )
      const saved =
        /(\d+ exchanges? saved)/.exec(record.stdout)?.[1] ?? 'no summary'
      const size = (await stat(file)).size
      line(
        'record',
        name,
        record.mb,
        `exit ${record.code}; ${calls} call(s), the client read ${Math.round(received / 1024 / 1024)} MB; ${saved}, file ${Math.round(size / 1024)} KB`,
      )
    } finally {
      await service.close()
    }
  }
} finally {
  await elsewhere.close()
  await rm(folder, { recursive: true, force: true })
}
console.log(
  over
    ? `Some run went over ${BUDGET_MB} MB.`
    : `Every run stayed under ${BUDGET_MB} MB.`,
)
process.exitCode = over ? 1 : 0
