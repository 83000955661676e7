import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { createSandbox } from '../src/index.ts'
import { DEMO_KEY_ONE } from '../src/fixtures.ts'
import { setupSandboxServer } from '../src/runtimes/node-entry.ts'

// A real service beside the sandbox: what an unhandled request would reach.
let other: Server
let otherUrl: string
beforeAll(async () => {
  other = createServer((_req, res) => res.end('the real service'))
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve))
  otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}/`
})
afterAll(() => new Promise<void>((resolve) => other.close(() => resolve())))

/** Runs `body` with a listening sandbox server, closing it afterwards. */
async function withServer(
  options: Parameters<typeof setupSandboxServer>[1],
  body: () => Promise<void>,
): Promise<void> {
  const sandbox = createSandbox({ seed: 1 })
  const server = setupSandboxServer(sandbox, options)
  server.listen()
  try {
    await body()
  } finally {
    server.close()
  }
}

const createCustomer = () =>
  fetch('https://api.example.test/v1/customers', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
  })

it('answers the API through msw with the sandbox handlers', async () => {
  await withServer(undefined, async () => {
    const response = await createCustomer()
    expect(response.status).toBe(201)
    expect(await response.json()).toMatchObject({ name: 'Ada' })
  })
})

it('fails a request no handler answers by default (onUnhandled: error)', async () => {
  const quiet = vi.spyOn(console, 'error').mockImplementation(() => {})
  try {
    await withServer(undefined, async () => {
      const outcome = await fetch(otherUrl).then(
        (response) => response.text(),
        (error: unknown) => error,
      )
      expect(outcome).not.toBe('the real service')
      expect(outcome).toBeInstanceOf(Error)
    })
    expect(quiet).toHaveBeenCalled()
  } finally {
    quiet.mockRestore()
  }
})

it('lets an unhandled request through with onUnhandled: bypass', async () => {
  await withServer({ onUnhandled: 'bypass' }, async () => {
    const response = await fetch(otherUrl)
    expect(await response.text()).toBe('the real service')
    expect((await createCustomer()).status).toBe(201)
  })
})

it('warns about an unhandled request with onUnhandled: warn, and lets it through', async () => {
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
  try {
    await withServer({ onUnhandled: 'warn' }, async () => {
      expect(await (await fetch(otherUrl)).text()).toBe('the real service')
    })
    expect(warn).toHaveBeenCalled()
  } finally {
    warn.mockRestore()
  }
})

it('lets listen() options of the caller win over onUnhandled', async () => {
  const sandbox = createSandbox({ seed: 1 })
  const server = setupSandboxServer(sandbox, { onUnhandled: 'error' })
  server.listen({
    onUnhandledRequest: 'bypass',
    onUnhandledFrame: 'bypass',
  } as Parameters<typeof server.listen>[0])
  try {
    expect(await (await fetch(otherUrl)).text()).toBe('the real service')
  } finally {
    server.close()
  }
})
