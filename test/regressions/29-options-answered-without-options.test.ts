import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { startServer, tempFolder } from '../_servers.ts'

// A plain OPTIONS (no CORS preflight) was refused with 405 and an Allow that
// did not list OPTIONS, and OPTIONS / was 404 while GET / served the page.

it('answers a plain OPTIONS with 204 and the Allow of its path, OPTIONS included', async () => {
  const sandbox = createSandbox({ seed: 1 })
  for (const [path, allow] of [
    ['/v1/customers', 'POST, OPTIONS'],
    ['/__sandbox/health', 'GET, HEAD, OPTIONS'],
    ['/__sandbox/scenarios', 'GET, HEAD, POST, DELETE, OPTIONS'],
  ] as const) {
    const answer = await sandbox.fetch(
      new Request(`http://localhost${path}`, { method: 'OPTIONS' }),
    )
    expect(answer.status, path).toBe(204)
    expect(answer.headers.get('allow'), path).toBe(allow)
    expect(await answer.text()).toBe('')
  }
  const refused = await sandbox.fetch(
    new Request('http://localhost/v1/customers', { method: 'PUT' }),
  )
  expect(refused.status).toBe(405)
  expect(refused.headers.get('allow')).toBe('POST, OPTIONS')
})

it('answers OPTIONS / of the server like GET / is served: 204 with Allow: GET, HEAD, OPTIONS', async () => {
  const playground = await tempFolder('cts-playground-')
  await mkdir(playground, { recursive: true })
  await writeFile(
    join(playground, 'index.html'),
    '<!doctype html><title>p</title>',
  )
  const server = await startServer({ seed: 1, playground })
  expect((await fetch(`${server.url}/`)).status).toBe(200)
  const options = await fetch(`${server.url}/`, { method: 'OPTIONS' })
  expect(options.status).toBe(204)
  expect(options.headers.get('allow')).toBe('GET, HEAD, OPTIONS')
  const api = await fetch(`${server.url}/v1/customers`, { method: 'OPTIONS' })
  expect(api.status).toBe(204)
  expect(api.headers.get('allow')).toBe('POST, OPTIONS')
  const none = await fetch(`${server.url}/nothing.html`, { method: 'OPTIONS' })
  expect(none.status).toBe(404)
})
