import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { startServer, tempFolder } from '../_servers.ts'

// The playground and the admin surface were sent without X-Frame-Options or
// CSP frame-ancestors: a page on another site could show them in a hidden
// frame and trick a click on "Reset to the seed" or the clock (clickjacking).

/** Asserts that a browser would refuse to show `response` in any frame. */
function expectNoFraming(response: Response, what: string): void {
  expect(response.headers.get('content-security-policy'), what).toBe(
    "frame-ancestors 'none'",
  )
  expect(response.headers.get('x-frame-options'), what).toBe('DENY')
}

it("sends the playground's page and files with frame-ancestors 'none' and X-Frame-Options: DENY", async () => {
  const playground = await tempFolder('cts-playground-')
  await mkdir(join(playground, 'assets'), { recursive: true })
  await writeFile(
    join(playground, 'index.html'),
    '<!doctype html><title>p</title>',
  )
  await writeFile(join(playground, 'assets', 'app-Ab12.js'), 'void 0')
  const server = await startServer({ seed: 1, playground })
  for (const path of ['/', '/index.html', '/assets/app-Ab12.js']) {
    const response = await fetch(`${server.url}${path}`)
    expect(response.status, path).toBe(200)
    expectNoFraming(response, path)
  }
  const head = await fetch(`${server.url}/`, { method: 'HEAD' })
  expect(head.status).toBe(200)
  expectNoFraming(head, 'HEAD /')
})

it("sends the admin surface's answers with frame-ancestors 'none' and X-Frame-Options: DENY", async () => {
  const server = await startServer({ seed: 1 })
  const origin = { origin: server.url }
  for (const [path, init, status] of [
    ['/__sandbox/health', {}, 200],
    ['/__sandbox/state', {}, 200],
    ['/__sandbox/nothing', {}, 404],
    ['/__sandbox/reset', { method: 'POST', headers: origin }, 200],
  ] as const) {
    const response = await fetch(`${server.url}${path}`, init)
    expect(response.status, path).toBe(status)
    expectNoFraming(response, path)
    await response.body?.cancel()
  }
})

it('leaves the API answers as they were', async () => {
  const server = await startServer({ seed: 1 })
  const response = await fetch(`${server.url}/v1/customers`, {
    method: 'POST',
  })
  expect(response.status).toBe(401)
  expect(response.headers.get('x-frame-options')).toBeNull()
})
