import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { connect } from 'node:net'
import { fileURLToPath } from 'node:url'
import { expect, it, onTestFinished } from 'vitest'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import { BIN } from './_spawn.ts'

const START = fileURLToPath(
  new URL('../examples/shared-sandbox/start.mjs', import.meta.url),
)

/** Whether something accepts a connection on 127.0.0.1:`port`. */
const listening = (port: number): Promise<boolean> =>
  new Promise((done) => {
    const socket = connect({ port, host: '127.0.0.1' })
    socket.on('connect', () => {
      socket.destroy()
      done(true)
    })
    socket.on('error', () => done(false))
  })

it('starts Redis, three replicas and a proxy with one command, serves a customer from every replica, and stops them all on SIGTERM', async () => {
  const child = spawn(process.execPath, [START], {
    env: { ...process.env, NO_COLOR: '1', SANDBOX_BIN: BIN },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk))
  const exited = new Promise<number | string>((done) =>
    child.on('exit', (code, signal) => done(code ?? signal ?? -1)),
  )
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null)
      child.kill('SIGTERM')
    await exited
  })

  // @note Everything it prints comes at once, after the proxy listens.
  const deadline = Date.now() + 20_000
  while (!/Ctrl-C/.test(stdout)) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`The example did not start:\n${stdout}\n${stderr}`)
    await new Promise((done) => setTimeout(done, 50))
  }
  const proxy = stdout.match(/^Sandbox: +(http:\/\/\S+)/m)![1]!
  expect(stdout).toContain(`Demo key: ${DEMO_KEY_ONE}`)
  const redisPort = Number(
    stdout.match(/^Redis: +redis:\/\/127\.0\.0\.1:(\d+)\/0/m)![1],
  )
  const dir = stdout.match(/appendfsync everysec, in (\S+)\)/)![1]!
  const replicas = stdout.match(/^Replicas: +(.+)$/m)![1]!.split(' ')
  expect(replicas).toHaveLength(3)

  const created = await fetch(`${proxy}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name: 'Ada Team', email: 'ada.team@example.com' }),
  })
  expect(created.status).toBe(201)
  const { id } = (await created.json()) as { id: string }

  // @note Round robin: after the POST took one turn, three reads reach the
  // three replicas, the one that wrote it last.
  for (let n = 0; n < 3; n++) {
    const state = await fetch(`${proxy}/__sandbox/state`)
    expect(state.status).toBe(200)
    const { customers } = (await state.json()) as {
      customers: { id: string; name: string }[]
    }
    expect(customers.find((customer) => customer.id === id)).toMatchObject({
      name: 'Ada Team',
    })
  }

  child.kill('SIGTERM')
  expect(await exited).toBe(0)
  for (const url of [proxy, ...replicas])
    expect(await listening(Number(new URL(url).port))).toBe(false)
  expect(await listening(redisPort)).toBe(false)
  expect(existsSync(dir)).toBe(false)
}, 30_000)
