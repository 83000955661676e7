import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { setupServer } from 'msw/node'
import { expect, it, onTestFinished, vi } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import type { ErrorFormatter } from '../../src/index.ts'

// Found by using the sandbox as a consumer does: an `errorFormat` that
// returned no Response (nothing, a plain object, a string, a promise, as an
// `async` one does), one whose headers cannot be set (Response.redirect())
// or threw made `sandbox.fetch` reject, made msw answer
// 500 with the error's stack as its body, and stopped a standalone server
// at its first error answer (exit 1, a TypeError's stack on stderr). The
// error is now answered with the problem JSON it was rendering (its status,
// code and headers), and stderr says once, in one line, what the format did.

/** Formats that are not `(problem) => Response`, as JavaScript lets them be written. */
const BROKEN = {
  'returns nothing': () => undefined,
  'returns a plain object': (problem: { code: string }) => ({
    error: problem.code,
  }),
  'returns a string': (problem: { code: string }) => `error ${problem.code}`,
  'returns a promise': async (problem: { code: string; status: number }) =>
    Response.json({ error: problem.code }, { status: problem.status }),
  'returns a promise that rejects': async () => {
    throw new Error('the format failed later')
  },
  throws: () => {
    throw new Error('the format failed')
  },
  'returns a Response whose headers cannot be set': () =>
    Response.redirect('https://example.com/', 302),
} as unknown as Record<string, ErrorFormatter>
const KINDS = Object.keys(BROKEN)

/** What stderr should say of each: the mistake, by name. */
const SAID: Record<string, RegExp> = {
  'returns nothing':
    /TypeError: errorFormat returned undefined, not a Response/,
  'returns a plain object':
    /TypeError: errorFormat returned \[object Object\], not a Response/,
  'returns a string':
    /TypeError: errorFormat returned error \w+, not a Response/,
  'returns a promise':
    /TypeError: errorFormat returned \[object Promise\], not a Response/,
  'returns a promise that rejects':
    /TypeError: errorFormat returned \[object Promise\], not a Response/,
  throws: /Error: the format failed/,
  'returns a Response whose headers cannot be set':
    /TypeError: errorFormat returned a Response whose headers cannot be set/,
}

const API = 'https://api.example.test'

/** A create without credentials: a 401 whose answer carries WWW-Authenticate. */
const unauthenticated = (send: typeof fetch) =>
  send(`${API}/v1/customers`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
  })

/** The default answer to a create without credentials, as a consumer reads it. */
async function expectDefaultProblem(response: Response): Promise<string> {
  expect(response.status).toBe(401)
  expect(response.headers.get('content-type')).toBe('application/problem+json')
  expect(response.headers.get('www-authenticate')).toBe(
    'Bearer realm="sandbox"',
  )
  const problem = (await response.json()) as {
    code: string
    request_id: string
  }
  expect(problem.code).toBe('missing_credentials')
  expect(problem.request_id).toBe(response.headers.get('x-request-id'))
  return problem.request_id
}

/** Collects what the sandbox says on stderr through console.error. */
function stderr(): () => string[] {
  const said = vi.spyOn(console, 'error').mockImplementation(() => {})
  onTestFinished(() => said.mockRestore())
  return () => said.mock.calls.map((call) => call.join(' '))
}

it.each(KINDS)(
  'answers the problem an errorFormat that %s was rendering, through sandbox.fetch, and says so once',
  async (kind) => {
    const lines = stderr()
    const sandbox = createSandbox({ seed: 1, errorFormat: BROKEN[kind] })
    const requestId = await expectDefaultProblem(
      await unauthenticated(sandbox.fetch),
    )
    // A promise left rejected would stop a Node process a turn later.
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(lines()).toHaveLength(1)
    expect(lines()[0]).toContain(requestId)
    expect(lines()[0]).toMatch(SAID[kind]!)
  },
)

it.each(KINDS)(
  'answers the problem an errorFormat that %s was rendering, through msw, and says so once',
  async (kind) => {
    const lines = stderr()
    const sandbox = createSandbox({ seed: 1, errorFormat: BROKEN[kind] })
    const server = setupServer(...sandbox.handlers)
    server.listen()
    onTestFinished(() => server.close())
    // @note Looked up at the call: msw patches the global fetch in listen().
    const requestId = await expectDefaultProblem(
      await unauthenticated((...args) => fetch(...args)),
    )
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(lines()).toHaveLength(1)
    expect(lines()[0]).toContain(requestId)
    expect(lines()[0]).toMatch(SAID[kind]!)
  },
)

it('answers every error of a standalone server whose errorFormat returns no Response, and keeps serving', async () => {
  const node = fileURLToPath(
    new URL('../../src/runtimes/node.ts', import.meta.url),
  )
  // A server of its own: the old one exited, which a test's own process must not.
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `const { createSandboxServer } = await import(${JSON.stringify(node)})
      const formats = [
        () => undefined,
        (problem) => ({ error: problem.code }),
        (problem) => 'error ' + problem.code,
        async (problem) => Response.json({ error: problem.code }, { status: problem.status }),
        async () => { throw new Error('the format failed later') },
        () => { throw new Error('the format failed') },
        () => Response.redirect('https://example.com/', 302),
      ]
      let next = 0
      const server = await createSandboxServer({
        port: 0,
        seed: 1,
        errorFormat: (problem) => formats[next++ % formats.length](problem),
      })
      console.log(server.url)`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  onTestFinished(() => {
    child.kill('SIGKILL')
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk))
  child.stderr.on('data', (chunk: Buffer) => (err += chunk))
  await vi.waitFor(() => expect(out).toMatch(/^http:\/\/\S+\n/), {
    timeout: 20_000,
  })
  const url = out.trim().split('\n')[0]!
  const ids: string[] = []
  for (const _ of KINDS) {
    const response = await fetch(`${url}/v1/customers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
    })
    ids.push(await expectDefaultProblem(response))
  }
  const health = await fetch(`${url}/__sandbox/health`)
  expect(health.status).toBe(200)
  await new Promise((resolve) => setTimeout(resolve, 50))
  expect(child.exitCode).toBe(null)
  expect(child.signalCode).toBe(null)
  const lines = err.split('\n').filter((line) => line !== '')
  expect(lines).toHaveLength(KINDS.length)
  for (const [index, kind] of KINDS.entries()) {
    expect(lines[index]).toContain(ids[index])
    expect(lines[index]).toMatch(SAID[kind]!)
  }
  expect(err).not.toMatch(/\n\s+at /)
}, 30_000)
