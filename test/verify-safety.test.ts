import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import { main } from '../src/cli/cli.ts'
import {
  createSandboxServer,
  type SandboxServer,
} from '../src/runtimes/node.ts'
import { runVerify } from '../src/cli/verify/index.ts'
import { startMisbehaving } from './_misbehaving.ts'
import { runCli, startServer, tempFolder } from './_servers.ts'

/** `verify` against `target` with the demo key. */
const verifyArgs = (target: string): string[] => [
  'verify',
  '--target',
  target,
  '--key',
  DEMO_KEY_ONE,
]

let target: SandboxServer

beforeAll(async () => {
  target = await createSandboxServer({ port: 0, customersPerAccount: 0 })
})
afterAll(async () => {
  await target.close()
})

const FAST = { rate: 2000, timeoutMs: 5000 }

function sink(isTTY = false) {
  let text = ''
  return {
    isTTY,
    columns: 120,
    write(chunk: string) {
      text += chunk
      return true
    },
    text: () => text,
  } as unknown as NodeJS.WritableStream & {
    isTTY: boolean
    text(): string
  }
}

const created = () => {
  const state = target.sandbox.state()
  return { customers: state.customers, tokens: state.tokens }
}

describe('verify is bounded and polite', { timeout: 60_000 }, () => {
  it('--dry-run lists every request, secrets masked, and sends nothing', async () => {
    await target.sandbox.reset()
    const stdout = sink()
    const { exitCode } = await main({
      args: [...verifyArgs(target.url), '--dry-run'],
      stdout,
      stderr: sink(),
      env: {},
    })
    expect(exitCode).toBe(0)
    expect(target.sandbox.journal.list()).toHaveLength(0)
    const lines = stdout.text().match(/^ +\d+\. POST \S+/gm) ?? []
    expect(lines.length).toBeGreaterThan(30)
    for (const line of lines)
      expect(line).toMatch(
        /POST http:\/\/127\.0\.0\.1:\d+\/(v1\/customers|v2\/tokens)$/,
      )
    expect(stdout.text()).toContain('Nothing was sent')
    expect(stdout.text()).not.toContain(DEMO_KEY_ONE)
    expect(stdout.text()).toContain('sk_test_…0001')
  })

  it('calls only POST /v1/customers and POST /v2/tokens, and tags every customer it creates', async () => {
    await target.sandbox.reset()
    const report = await runVerify({
      target: target.url,
      key: DEMO_KEY_ONE,
      ...FAST,
    })
    const journal = target.sandbox.journal.list()
    // The 431 of the header-count probe is answered before the journal sees it.
    expect(journal.length).toBe(report.requests - 1)
    for (const entry of journal) {
      expect(entry.method).toBe('POST')
      expect(['/v1/customers', '/v2/tokens']).toContain(entry.path)
    }
    const { customers, tokens } = created()
    expect(customers.length).toBeGreaterThan(0)
    for (const customer of customers)
      expect(`${customer.name} ${customer.email}`).toContain(report.tag)
    expect(customers.length + tokens.length).toBe(report.creates)
    expect(report.creates).toBeLessThanOrEqual(20)
  })

  it('stops at --max-requests and says so on the rows it could not probe', async () => {
    await target.sandbox.reset()
    const report = await runVerify({
      target: target.url,
      key: DEMO_KEY_ONE,
      ...FAST,
      maxRequests: 10,
    })
    expect(target.sandbox.journal.list()).toHaveLength(10)
    expect(report.requests).toBe(10)
    expect(
      report.rows.filter((r) =>
        r.observed.includes('--max-requests (10) reached'),
      ).length,
    ).toBeGreaterThan(5)
  })

  it('creates at most --max-creates records', async () => {
    await target.sandbox.reset()
    const report = await runVerify({
      target: target.url,
      key: DEMO_KEY_ONE,
      ...FAST,
      maxCreates: 3,
    })
    const { customers, tokens } = created()
    expect(customers.length + tokens.length).toBe(3)
    expect(
      report.rows.some((r) => r.observed.includes('--max-creates (3) reached')),
    ).toBe(true)
  })

  it('never prints the key or a minted token in full, in the table, the JSON or the written config', async () => {
    const outputs: string[] = []
    const configFile = join(await tempFolder('verify-'), 'c.json')
    for (const json of [false, true]) {
      const stdout = sink()
      await main({
        args: [
          ...verifyArgs(target.url),
          '--rate',
          '2000',
          ...(json ? ['--json', '--write-config', configFile] : []),
        ],
        stdout,
        stderr: sink(),
        env: {},
      })
      outputs.push(stdout.text())
    }
    outputs.push(await readFile(configFile, 'utf8'))
    for (const text of outputs) {
      expect(text).not.toContain(DEMO_KEY_ONE)
      expect(text).not.toMatch(/tok_test_[0-9A-Za-z]{16,}/)
    }
    expect(JSON.parse(outputs[1]!).summary.matches).toBe(24)
  })

  it('an abort stops cleanly with a partial report', async () => {
    const controller = new AbortController()
    const report = await runVerify({
      target: target.url,
      key: DEMO_KEY_ONE,
      ...FAST,
      signal: controller.signal,
      onProgress: (sent) => {
        if (sent === 5) controller.abort()
      },
    })
    expect(report.stopped).toBe('stopped (interrupted)')
    expect(report.requests).toBe(5)
    expect(
      report.rows.filter((r) => r.observed === 'stopped (interrupted)').length,
    ).toBeGreaterThan(10)
    expect(
      report.rows.find((r) => r.id === 'customer.success-status')!.verdict,
    ).toBe('matches')
  })

  it('shows a progress bar on a terminal only', async () => {
    const run = async (isTTY: boolean) => {
      const stdout = sink(isTTY)
      await main({
        args: [
          ...verifyArgs(target.url),
          '--rate',
          '2000',
          '--max-requests',
          '5',
        ],
        stdout,
        stderr: sink(),
        env: isTTY ? { NO_COLOR: '1' } : {},
      })
      return stdout.text()
    }
    expect(await run(true)).toContain('█')
    const pipe = await run(false)
    expect(pipe).not.toContain('█')
    expect(pipe).not.toContain('\r')
  })

  it('a usage mistake is one line and exit 2', async () => {
    const stderr = sink()
    const { exitCode } = await main({
      args: ['verify', '--key', DEMO_KEY_ONE],
      stdout: sink(),
      stderr,
      env: {},
    })
    expect(exitCode).toBe(2)
    expect(stderr.text().split('\n')[0]).toBe(
      'customer-token-sandbox verify: --target URL is required',
    )
  })
})

describe('a misbehaving target', { timeout: 60_000 }, () => {
  const cases = [
    ['silent', 'did not answer within 300 ms'],
    ['html', 'text/html, not JSON'],
    ['reset', 'the request failed'],
    ['server-error', 'the service answered 500'],
  ] as const
  it('is reported per row, and the command exits 3 without a stack trace', async () => {
    const runs = await Promise.all(
      cases.map(async ([kind]) => {
        const { url } = await startMisbehaving({ kind })
        const cli = runCli([
          ...verifyArgs(url),
          '--timeout',
          '300',
          '--rate',
          '1000',
        ])
        return { cli, code: await cli.exited }
      }),
    )
    for (const [i, { cli, code }] of runs.entries()) {
      const [, message] = cases[i]!
      expect(code, cli.stderr()).toBe(3)
      expect(cli.stderr()).not.toMatch(/\n\s+at /)
      const out = cli.stdout()
      expect(
        out.match(
          new RegExp(message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'g'),
        )!.length,
      ).toBeGreaterThanOrEqual(3)
      expect(out).toMatch(/customer\.success-status +unknown/)
      expect(out).toContain(
        'not probed: the service failed 3 probe groups in a row',
      )
      expect(out).toContain('The service misbehaved')
      expect(out).not.toMatch(/\bmatches\b.*\n/)
    }
  })

  it('a service whose rate limit cuts the battery short still has its limit read from the answers', async () => {
    const strict = await startServer({
      rateLimit: { limit: 10, windowSeconds: 60 },
    })
    const report = await runVerify({
      target: strict.url,
      key: DEMO_KEY_ONE,
      ...FAST,
    })
    const rate = report.rows.find((r) => r.id === 'limits.rate')!
    expect(rate.verdict).toBe('differs')
    expect(rate.observed).toContain('10 per 60 s')
    expect(rate.observed).toMatch(/\d+ probes were answered 429/)
    expect(report.config.rateLimit).toEqual({ limit: 10, windowSeconds: 60 })
    expect(report.failed).toContain('429')
    expect(report.requests).toBeLessThan(20)
  })

  it('Ctrl-C stops the CLI cleanly with a partial report', async () => {
    const cli = runCli([...verifyArgs(target.url), '--rate', '2'])
    // Two requests a second: the battery is far from done when the signal comes.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(await cli.stop('SIGINT')).toBe(130)
    expect(cli.stdout()).toContain('Stopped early: this report is partial.')
    expect(cli.stdout()).toContain('stopped (interrupted)')
    expect(cli.stderr()).toBe('')
  })
})
