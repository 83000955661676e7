// Requests a test sends, with nothing of node's server or CLI loaded: a
// test in happy-dom, or one of `sandbox.fetch` alone, imports them here
// (test/_servers.ts cannot be loaded in happy-dom).
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'

/** A fetch function: the global one, or `sandbox.fetch`. */
export type Send = (url: string, init: RequestInit) => Promise<Response>

/**
 * POSTs `body` as JSON to `/v1/customers` at `url` with the demo key,
 * whatever it holds (an invalid body too), with `headers` beside (an
 * `Idempotency-Key`, another `authorization`) and a `signal` to give up by,
 * through `fetch`: the global fetch, looked up at the call, unless given
 * another (`sandbox.fetch`).
 *
 * @example
 * expect((await postCustomer(recorder.url, { name: '' })).status).toBe(422)
 * await postCustomer('https://api.example.test', body, { fetch: sandbox.fetch })
 */
export const postCustomer = (
  url: string,
  body: unknown,
  {
    headers = {},
    signal,
    fetch: send = fetch,
  }: {
    headers?: Record<string, string>
    signal?: AbortSignal
    fetch?: Send
  } = {},
): Promise<Response> =>
  send(`${url}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
      ...headers,
    },
    body: JSON.stringify(body),
    ...(signal && { signal }),
  })
