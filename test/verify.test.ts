import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import { main } from '../src/cli/cli.ts'
import { readConfig } from '../src/cli/flags.ts'
import {
  createSandboxServer,
  type SandboxServer,
} from '../src/runtimes/node.ts'
import { runVerify, type VerifyReport } from '../src/cli/verify/index.ts'
import { ALL_DIFFERENT, startCli, startServer } from './_servers.ts'

// Fast and generous: the targets are local, and a differing service needs bound searches.
const FAST = { rate: 2000, maxCreates: 100, maxRequests: 400, timeoutMs: 5000 }

let dir: string
let live: SandboxServer
let plain: SandboxServer
let report: VerifyReport
const servers: { close(): unknown }[] = []

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'verify-'))
  live = await createSandboxServer({ port: 0, ...ALL_DIFFERENT })
  plain = await createSandboxServer({ port: 0 })
  report = await runVerify({ target: live.url, key: DEMO_KEY_ONE, ...FAST })
}, 60_000)

afterAll(async () => {
  await live.close()
  await plain.close()
  for (const server of servers) await server.close()
  await rm(dir, { recursive: true, force: true })
})

const row = (r: VerifyReport, id: string) => r.rows.find((x) => x.id === id)!

describe('verify detects each configurable difference of a live service', () => {
  const cases: [string, string, Record<string, unknown>][] = [
    [
      'customer.required-fields',
      'required: email',
      { requiredFields: ['email'] },
    ],
    ['customer.name-constraints', '2–50', { nameLength: { min: 2, max: 50 } }],
    ['customer.email-constraints', 'at most 120', { emailMaxLength: 120 }],
    ['customer.email-uniqueness', '409', { uniqueEmail: true }],
    ['request.unknown-fields', 'ignore', { unknownFields: 'ignore' }],
    ['token.scope-catalog', 'invoices:read', { scopes: ALL_DIFFERENT.scopes }],
    [
      'token.expires-in',
      'default 600, 30–7200',
      { expiresIn: { default: 600, min: 30, max: 7200 } },
    ],
    ['limits.token-lifetime', '30–7200', {}],
    ['auth.v1-accepts-tokens', 'no', { v1AcceptsTokens: false }],
    ['auth.token-issuers', 'api-keys', { tokenIssuers: 'api-keys' }],
    [
      'limits.rate',
      '5000 per 120 s',
      { rateLimit: { limit: 5000, windowSeconds: 120 } },
    ],
    ['limits.size', '65536', { maxBodyBytes: 65_536 }],
    ['limits.keep-alive-timeout', 'timeout=3', { keepAliveTimeout: 3000 }],
    ['limits.header-count', 'at most 40', { maxHeadersCount: 40 }],
  ]
  it.each(cases)('%s', (id, observed, config) => {
    const result = row(report, id)
    expect(result.verdict).toBe('differs')
    expect(result.observed).toContain(observed)
    expect(result.config ?? {}).toEqual(
      id === 'limits.token-lifetime' ? {} : config,
    )
    for (const [key, value] of Object.entries(config))
      expect(report.config[key]).toEqual(value)
  })
})

describe('round trip: differ → config → all match', { timeout: 60_000 }, () => {
  it('a config written from the differences, loaded into a fresh sandbox, makes a second verify report every probed row as matching', async () => {
    const file = join(dir, 'sandbox.config.json')
    const first = await main({
      args: [
        'verify',
        '--target',
        live.url,
        '--key',
        DEMO_KEY_ONE,
        '--rate',
        '2000',
        '--max-creates',
        '100',
        '--max-requests',
        '400',
        '--json',
        '--write-config',
        file,
      ],
      stdout: sink(),
      stderr: sink(),
      env: {},
    })
    expect(first.exitCode).toBe(1)
    const config = await readConfig(file)
    expect(config).toMatchObject({ uniqueEmail: true, v1AcceptsTokens: false })

    // A fresh sandbox started by the CLI from that file, as a team would.
    const { url } = await startCli(['--config', file, '--port', '0', '--quiet'])
    for (const target of [url, live.url]) {
      const second = await runVerify({
        target,
        key: DEMO_KEY_ONE,
        config,
        ...FAST,
      })
      const probed = second.rows.filter((r) => r.verdict !== 'unknown')
      expect(second.summary.differs, JSON.stringify(second.rows)).toBe(0)
      expect(probed).toHaveLength(24)
    }
  })

  it('a sandbox with the default options matches itself on every probed row', async () => {
    const own = await runVerify({
      target: plain.url,
      key: DEMO_KEY_ONE,
      ...FAST,
    })
    expect(own.summary).toEqual({ matches: 24, differs: 0, unknown: 12 })
    expect(own.coverage).toEqual({ probed: 24, observable: 31 })
  })
})

/** A proxy in front of the default sandbox that alters its answers. */
async function alteredTarget(
  alter: (
    path: string,
    request: { headers: Headers; body: string },
    response: { status: number; headers: Headers; body: string },
  ) => void,
): Promise<string> {
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers))
      if (
        typeof value === 'string' &&
        !['host', 'connection', 'content-length'].includes(name)
      )
        headers.set(name, value)
    const body = Buffer.concat(chunks).toString('utf8')
    const answer = await fetch(`${plain.url}${req.url}`, {
      method: 'POST',
      headers,
      body,
    })
    const response = {
      status: answer.status,
      headers: new Headers(answer.headers),
      body: await answer.text(),
    }
    response.headers.delete('content-length')
    response.headers.delete('transfer-encoding')
    alter(req.url ?? '', { headers, body }, response)
    res.writeHead(response.status, Object.fromEntries(response.headers))
    res.end(response.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  servers.push({
    close: () =>
      new Promise((resolve) => {
        server.close(resolve)
        server.closeAllConnections()
      }),
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const rewriteJson = (
  response: { body: string },
  change: (json: Record<string, unknown>) => void,
) => {
  try {
    const json = JSON.parse(response.body) as Record<string, unknown>
    change(json)
    response.body = JSON.stringify(json)
  } catch {
    // Not JSON: left as is.
  }
}

describe.concurrent(
  'verify detects a service that does what no option expresses',
  { timeout: 60_000 },
  () => {
    const cases: [string, Parameters<typeof alteredTarget>[0], string][] = [
      [
        'customer.success-status',
        (path, _req, res) => {
          if (path === '/v1/customers' && res.status === 201) res.status = 200
        },
        '200 with',
      ],
      [
        'customer.id-format',
        (path, _req, res) => {
          if (path === '/v1/customers' && res.status === 201)
            rewriteJson(res, (j) => {
              j.id = String(j.id).replace('cus_', 'customer-')
            })
        },
        'customer-',
      ],
      [
        'token.record',
        (path, _req, res) => {
          if (path === '/v2/tokens') res.headers.delete('cache-control')
        },
        'Cache-Control absent',
      ],
      [
        'time.range',
        (path, _req, res) => {
          if (path === '/v2/tokens' && res.status === 201)
            rewriteJson(res, (j) => {
              j.created_at = String(j.created_at).replace(/\.\d{3}Z$/, 'Z')
            })
        },
        'created_at',
      ],
      [
        'token.content-type',
        (path, req, res) => {
          if (
            path === '/v2/tokens' &&
            req.headers.get('content-type') === 'text/plain'
          )
            res.status = 415
        },
        'text/plain 415',
      ],
      [
        'auth.token-presentation',
        (_path, req, res) => {
          if (req.headers.get('authorization')?.startsWith('bearer '))
            res.status = 401
        },
        'lower-case scheme refused',
      ],
      [
        'auth.errors',
        (_path, _req, res) => {
          res.headers.delete('www-authenticate')
        },
        'no WWW-Authenticate',
      ],
      [
        'versioning.deprecation',
        (path, _req, res) => {
          if (path === '/v1/customers')
            res.headers.set('deprecation', '@1767225600')
        },
        'Deprecation @1767225600',
      ],
      [
        'errors.shape',
        (_path, _req, res) => {
          if (res.status === 422) res.status = 400
        },
        'a field error is 400',
      ],
      [
        'idempotency',
        (_path, _req, res) => {
          res.headers.delete('idempotent-replayed')
        },
        'without Idempotent-Replayed',
      ],
    ]
    it.each(cases)('%s', async (id, alter, observed) => {
      const target = await alteredTarget(alter)
      const result = await runVerify({ target, key: DEMO_KEY_ONE, ...FAST })
      expect(row(result, id).verdict).toBe('differs')
      expect(row(result, id).observed).toContain(observed)
      expect(row(result, id).inexpressible).toBeTruthy()
    })

    it('errors.shape: another error body format is seen and the report says no config can hold it', async () => {
      const custom = await startServer({
        errorFormat: (p) =>
          Response.json(
            { error: { code: p.code, message: p.detail } },
            { status: p.status },
          ),
      })
      const result = await runVerify({
        target: custom.url,
        key: DEMO_KEY_ONE,
        ...FAST,
      })
      const shape = row(result, 'errors.shape')
      expect(shape.verdict).toBe('differs')
      expect(shape.observed).toContain('0 of')
      expect(shape.inexpressible).toMatch(/no config file can hold it/)
      expect(result.config).not.toHaveProperty('errorFormat')
      const text = (await import('../src/cli/verify/report.ts')).formatReport(
        result,
      )
      expect(text).toContain(
        'No option makes the sandbox do what the service does here',
      )
    })
  },
)

function sink(): NodeJS.WritableStream & { text(): string } {
  let text = ''
  return {
    write(chunk: string) {
      text += chunk
      return true
    },
    text: () => text,
  } as unknown as NodeJS.WritableStream & { text(): string }
}
