import { getResponse } from 'msw'
import { afterEach } from 'vitest'
import { createSandbox } from '../src/index.ts'
import type { SandboxCore, SandboxOptions } from '../src/index.ts'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import { createSandboxServer } from '../src/runtimes/node.ts'
import { checkResponse } from './_openapi.ts'

/** A sandbox under test, reached through one adapter. */
export interface Client {
  sandbox: SandboxCore
  /** Sends a request to `path` (e.g. `/v1/customers`) on the sandbox's origin. */
  fetch(path: string, init?: RequestInit): Promise<Response>
  close(): Promise<void>
}

/** One way of reaching the sandbox: the contract runs against each. */
export interface Target {
  name: string
  start(options?: SandboxOptions): Promise<Client>
}

/** Through MSW's `getResponse`, in-process, with no network. */
export const inProcess: Target = {
  name: 'in-process (getResponse)',
  async start(options = {}) {
    const sandbox = createSandbox({ seed: 1, ...options })
    await sandbox.ready
    return {
      sandbox,
      async fetch(path, init) {
        const request = new Request(new URL(path, 'http://sandbox.test'), init)
        const response = await getResponse(sandbox.handlers, request)
        if (!response)
          throw new Error(
            `No handler answered ${init?.method ?? 'GET'} ${path}`,
          )
        // @note MSW turns Response.error() into a rejected fetch; do the same here.
        if (response.type === 'error') throw new TypeError('Failed to fetch')
        await checkResponse(
          sandbox,
          request.method,
          new URL(request.url),
          response,
        )
        return response
      },
      async close() {},
    }
  },
}

/** Through the standalone server over a real socket, as curl or a mobile app would. */
export const overHttp: Target = {
  name: 'server (HTTP)',
  async start(options = {}) {
    // Deterministic like the in-process target, so both answer alike.
    const server = await createSandboxServer({
      port: 0,
      seed: 1,
      deterministic: true,
      ...options,
    })
    return {
      sandbox: server.sandbox,
      async fetch(path, init) {
        const url = new URL(path, server.url)
        const response = await fetch(url, init)
        await checkResponse(
          server.sandbox,
          init?.method ?? 'GET',
          url,
          response,
        )
        return response
      },
      close: () => server.close(),
    }
  },
}

/** Every target the contract suite runs against. */
export const targets: Target[] = [inProcess, overHttp]

/** Options of `send`. */
export interface SendOptions {
  /** The JSON body; a string is sent as is. */
  body?: unknown
  /** The credential for `Authorization: Bearer …`; `null` sends no header. @default DEMO_KEY_ONE */
  key?: string | null
  headers?: Record<string, string>
}

/**
 * Sends a JSON request the way a consumer would and returns the response
 * with its parsed body.
 *
 * @example
 * const { status, body } = await send(client, 'POST', '/v1/customers', { body: { name: 'Ada', email: 'ada@example.com' } })
 */
export async function send(
  client: Client,
  method: string,
  path: string,
  { body, key = DEMO_KEY_ONE, headers = {} }: SendOptions = {},
): Promise<{
  status: number
  headers: Headers
  body: any
  text: string
  response: Response
}> {
  const init: RequestInit = { method, headers: { ...headers } }
  const h = init.headers as Record<string, string>
  if (key !== null && !('authorization' in h) && !('Authorization' in h))
    h.authorization = `Bearer ${key}`
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body)
    if (!Object.keys(h).some((name) => name.toLowerCase() === 'content-type'))
      h['content-type'] = 'application/json'
  }
  const response = await client.fetch(path, init)
  const text = await response.clone().text()
  let parsed: unknown = undefined
  try {
    parsed = text === '' ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return {
    status: response.status,
    headers: response.headers,
    body: parsed,
    text,
    response,
  }
}

/**
 * Starts fresh clients of one target (seed 1 unless given) and closes them
 * after each test; `prepare` runs on each new client.
 *
 * @example
 * const start = useClients(target, (client) => client.sandbox.clock.set(NOW))
 * const client = await start({ uniqueEmail: true })
 */
export function useClients(
  target: Target,
  prepare?: (client: Client) => void,
): (options?: SandboxOptions) => Promise<Client> {
  const clients: Client[] = []
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close()
  })
  return async (options = {}) => {
    const client = await target.start({ seed: 1, ...options })
    clients.push(client)
    prepare?.(client)
    return client
  }
}

/**
 * POSTs JSON straight to a sandbox's MSW handlers, without a client.
 *
 * @example
 * const { status, body } = await postTo(sandbox, '/v1/customers', { name: 'Ada', email: 'ada@example.com' })
 */
export async function postTo(
  sandbox: { handlers: Parameters<typeof getResponse>[0] },
  path: string,
  body: unknown,
  key: string = DEMO_KEY_ONE,
): Promise<{ status: number; text: string; body: any }> {
  const response = await getResponse(
    sandbox.handlers,
    jsonPost(`http://sandbox.test${path}`, body, key),
  )
  const text = await response!.text()
  return { status: response!.status, text, body: JSON.parse(text) }
}

/**
 * POSTs JSON through a sandbox's one `fetch`, with a credential (the demo
 * key unless told), and returns its answer.
 *
 * @example
 * const response = await postThrough(sandbox, '/v1/customers', { name: 'Ada', email: 'ada@example.com' })
 */
export function postThrough(
  sandbox: { fetch(request: Request): Promise<Response> },
  path: string,
  body: unknown,
  credential: string = DEMO_KEY_ONE,
): Promise<Response> {
  return sandbox.fetch(jsonPost(`http://api.test${path}`, body, credential))
}

/** A JSON POST to `url` with a Bearer credential. */
function jsonPost(url: string, body: unknown, credential: string): Request {
  return new Request(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${credential}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  })
}
