import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { BIN, spawnCli, type Spawned } from '../_spawn.ts'

// The reader of the server's output goes away (`customer-token-sandbox |
// head -1`, or a parent that spawned it with a pipe and exited): the next
// log line failed with EPIPE as an unhandled 'error' event, and the server
// died with it.

const running: Spawned[] = []
const children: ChildProcess[] = []
const folders: string[] = []
afterEach(async () => {
  for (const cli of running.splice(0)) {
    if (cli.child.exitCode === null && cli.child.signalCode === null) {
      cli.child.kill('SIGKILL')
      await cli.exited
    }
  }
  for (const child of children.splice(0)) child.kill('SIGKILL')
  for (const folder of folders.splice(0))
    await rm(folder, { recursive: true, force: true })
})

const createCustomer = (url: string, n: number) =>
  fetch(`${url}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      name: `${'Filler '.repeat(25)}${n}`,
      email: `filler${n}@example.com`,
    }),
  })

it.each([[[]], [['--log-format', 'json']]])(
  'keeps serving after its stdout closed, logging %j',
  async (logArgs) => {
    const cli = spawnCli(['--port', '0', ...logArgs])
    running.push(cli)
    const [url] = await cli.waitFor(/http:\/\/127\.0\.0\.1:\d+/)
    cli.child.stdout!.destroy()

    // Each request writes a log line to the closed pipe.
    for (let n = 0; n < 20; n++)
      expect((await createCustomer(url, n)).status).toBe(201)

    const health = await fetch(`${url}/__sandbox/health`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: 'ok' })
    expect(cli.child.exitCode).toBeNull()
    expect(cli.child.signalCode).toBeNull()
    expect(cli.stderr()).toContain(
      'stdout closed (EPIPE): the request log stops, the server keeps serving',
    )
    expect(cli.stderr()).not.toMatch(/\n\s+at /)

    // It still stops cleanly.
    cli.child.kill('SIGTERM')
    expect(await cli.exited).toBe(0)
  },
)

it(
  'keeps serving after its stderr closed, when it reports a full disk there',
  { timeout: 30_000 },
  async () => {
    const folder = await mkdtemp(join(tmpdir(), 'cts-stderr-'))
    folders.push(folder)
    // A disk that fills up without root, as in 14-disk-full-with-data-file:
    // every refused write is reported on stderr.
    const child = spawn(
      'bash',
      [
        '-c',
        `ulimit -f 48 && exec "$0" "$@"`,
        process.execPath,
        BIN,
        '--port',
        '0',
        '--quiet',
        '--customers',
        '5',
        '--data-file',
        join(folder, 'data.json'),
      ],
      {
        env: { ...process.env, NO_COLOR: '1', PORT: '', HOST: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    children.push(child)
    const exited = new Promise<number | string>((resolve) =>
      child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)),
    )
    const url = await new Promise<string>((resolve, reject) => {
      let stdout = ''
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk
        const match = /http:\/\/\S+/.exec(stdout)
        if (match) resolve(match[0])
      })
      void exited.then((code) => reject(new Error(`exited early: ${code}`)))
    })
    child.stderr!.destroy()

    // Two outages, each reported on the closed stderr: fill the file,
    // free it with a reset (a small snapshot fits), fill it again.
    for (let outage = 0; outage < 2; outage++) {
      const statuses = new Set<number>()
      for (let n = 0; n < 400 && !statuses.has(503); n++)
        statuses.add((await createCustomer(url, n)).status)
      expect(statuses).toContain(503)
      expect(
        (await fetch(`${url}/__sandbox/reset`, { method: 'POST' })).status,
      ).toBe(200)
    }

    const health = await fetch(`${url}/__sandbox/health`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: 'ok' })
    expect(child.exitCode).toBeNull()
    expect(child.signalCode).toBeNull()
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
  },
)
