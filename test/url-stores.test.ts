import { expect, it, vi } from 'vitest'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import { createSandboxServer } from '../src/runtimes/node.ts'
import { startRedis } from './_redis.ts'
import { runMain } from './_servers.ts'

// The stores a server opens from a URL (`--store`): which URLs it takes, and
// how a store that is away reads in an answer.

it.each([
  ['store', 'postgres://db.test/sandbox'],
  ['store.url', { url: 'memlog://x' }],
  ['store', 'REDIS://127.0.0.1:6379/0'],
])(
  'refuses as option "%s" a URL of no store it knows, naming the schemes it knows',
  async (name, store) => {
    await expect(createSandboxServer({ port: 0, store })).rejects.toThrow(
      new TypeError(
        `Failed to start the sandbox server: option "${name}" must be a redis:// or rediss:// URL. See SandboxServerOptions for its type and default.`,
      ),
    )
  },
)

it('refuses --store with a URL of no store it knows, in one line, exit 2', async () => {
  const [stderr, code] = await runMain([
    '--port',
    '0',
    '--store',
    'postgres://db.test/sandbox',
  ])
  expect(code).toBe(2)
  expect(stderr.split('\n')[0]).toBe(
    'customer-token-sandbox: Failed to start the sandbox server: option "store" must be a redis:// or rediss:// URL. See SandboxServerOptions for its type and default.',
  )
})

it('says in its 503 that the write did not reach the Redis store, and to retry once Redis can be reached again', async () => {
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
      /^The sandbox could not store this write in its Redis store \([A-Z_]+\), so nothing was changed\. Retry once Redis can be reached again; GET \/__sandbox\/health shows the storage error\.$/,
    )
  } finally {
    await server.close()
    errors.mockRestore()
  }
})
