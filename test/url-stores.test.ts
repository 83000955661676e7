import { expect, it, vi } from 'vitest'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import { URL_STORES, urlStoreSchemes } from '../src/model/stores.ts'
import { createSandboxServer } from '../src/runtimes/node.ts'
import { startRedis } from './_redis.ts'
import { runMain } from './_servers.ts'

// The stores a server opens from a URL (`--store`): which URLs it takes, and
// how a store that is away reads in an answer.

/** The option error of a store URL that no store opens, for `name`. */
const refusal = (name: string) =>
  new RegExp(
    `^Failed to start the sandbox server: option "${name}" must be a (.+) URL\\. See SandboxServerOptions for its type and default\\.$`,
  )

/** Whether `schemes`, as a message lists them, names every store's schemes. */
const namesEveryScheme = (schemes: string) =>
  URL_STORES.flatMap((entry) => entry.schemes).every((scheme) =>
    schemes.split(/, | or /).includes(`${scheme}://`),
  )

it.each([
  ['store', 'nostore://db.test/sandbox'],
  ['store.url', { url: 'nostore://x' }],
  ['store', 'REDIS://127.0.0.1:6379/0'],
])(
  'refuses as option "%s" a URL of no store it knows, naming the schemes it knows',
  async (name, store) => {
    const error = await createSandboxServer({ port: 0, store }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(error).toBeInstanceOf(TypeError)
    const [, schemes] = refusal(name).exec((error as Error).message) ?? []
    expect(schemes).toBeDefined()
    expect(namesEveryScheme(schemes!)).toBe(true)
  },
)

// @note With Redis the one store, this is "redis:// or rediss://", the words
// the option's message always had.
it('lists the schemes in the order of the registry, the last after "or"', () => {
  const schemes = URL_STORES.flatMap((entry) => entry.schemes)
  const listed = urlStoreSchemes()
  expect(listed.endsWith(` or ${schemes.at(-1)!}://`)).toBe(true)
  expect(listed.split(/, | or /)).toEqual(schemes.map((s) => `${s}://`))
})

it('refuses --store with a URL of no store it knows, in one line, exit 2', async () => {
  const [stderr, code] = await runMain([
    '--port',
    '0',
    '--store',
    'nostore://db.test/sandbox',
  ])
  expect(code).toBe(2)
  const [line] = stderr.split('\n')
  // Named by its flag: the JavaScript API's option and type are not the CLI's.
  expect(line).toBe(
    `customer-token-sandbox: --store must be a ${urlStoreSchemes()} URL.`,
  )
})

it('says in its 503 that the write did not reach the Redis store, and to retry once Redis takes writes again', async () => {
  const redis = await startRedis()
  const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
  const server = await createSandboxServer({ port: 0, store: redis.url })
  try {
    await redis.kill('SIGKILL')
    const response = await fetch(`${server.url}/v1/customers`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${DEMO_KEY_ONE}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name: 'Away', email: 'away@example.com' }),
    })
    expect(response.status).toBe(503)
    const { detail } = (await response.json()) as { detail: string }
    expect(detail).toMatch(
      /^The sandbox could not store this write in its Redis store \([A-Z_]+\), so nothing was changed\. Retry once Redis takes writes again; GET \/__sandbox\/health shows the storage error\.$/,
    )
  } finally {
    await server.close()
    errors.mockRestore()
  }
})
