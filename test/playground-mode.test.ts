import { describe, expect, it } from 'vitest'
import { chooseMode } from '../playground/mode.ts'
import { createSandbox } from '../src/index.ts'

// The playground picks whose data it shows from its URL and from whether a
// sandbox server answers the health check where it was served.
const sandbox = createSandbox()
const server: typeof fetch = (input, init) =>
  sandbox.fetch(new Request(input, init))
const staticHost: typeof fetch = async () =>
  new Response('<!doctype html><title>Playground</title>', {
    headers: { 'content-type': 'text/html' },
  })
const offline: typeof fetch = async () => {
  throw new TypeError('fetch failed')
}

describe('chooseMode', () => {
  it('shows the server that served the page, by default and with ?mode=server', async () => {
    for (const href of [
      'http://127.0.0.1:4100/',
      'http://127.0.0.1:4100/?mode=server',
    ]) {
      expect(await chooseMode(href, server)).toEqual({
        kind: 'server',
        origin: 'http://127.0.0.1:4100',
        server: 'http://127.0.0.1:4100',
      })
    }
  })

  it('runs in the page with ?mode=page, and still knows the server is one switch away', async () => {
    expect(
      await chooseMode('http://127.0.0.1:4100/?mode=page', server),
    ).toEqual({ kind: 'page', server: 'http://127.0.0.1:4100' })
    expect(
      await chooseMode('https://demo.example/?mode=page', staticHost),
    ).toEqual({ kind: 'page' })
  })

  it('runs in the page and says why where no sandbox server answers (static host, Vite dev, offline)', async () => {
    for (const fetcher of [staticHost, offline]) {
      const mode = await chooseMode('http://localhost:5173/', fetcher)
      expect(mode.kind).toBe('page')
      expect(mode.server).toBeUndefined()
      expect(mode.note).toContain(
        'No sandbox server answers http://localhost:5173/__sandbox/health',
      )
      expect(mode.note).toContain('?server=http://127.0.0.1:4100')
    }
  })

  it('shows the server that ?server= names, and explains a value that is no URL', async () => {
    const asked: string[] = []
    const recording: typeof fetch = (input, init) => {
      asked.push(String(input))
      return server(input, init)
    }
    expect(
      await chooseMode(
        'http://localhost:5173/?server=http://127.0.0.1:4100/anything',
        recording,
      ),
    ).toMatchObject({ kind: 'server', origin: 'http://127.0.0.1:4100' })
    expect(asked).toEqual(['http://127.0.0.1:4100/__sandbox/health'])

    // Found by using the playground from another origin: a named server
    // that refused the page (CORS) was told to add the ?server= it had.
    const refused = await chooseMode(
      'https://app.example.test/?server=http://127.0.0.1:4177',
      offline,
    )
    expect(refused).toMatchObject({ kind: 'page' })
    expect(refused.note).toContain(
      'No sandbox server answers http://127.0.0.1:4177/__sandbox/health to this page',
    )
    expect(refused.note).toContain('--admin-origins https://app.example.test')
    expect(refused.note).not.toContain('add ?server=')

    const mode = await chooseMode('http://localhost:5173/?server=4100', server)
    expect(mode).toMatchObject({ kind: 'page' })
    expect(mode.note).toContain('"4100" is not a URL')
  })
})
