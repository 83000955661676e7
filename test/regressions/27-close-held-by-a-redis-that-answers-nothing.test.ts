// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { startRedis } from '../_redis.ts'
import { postCustomer, startServer } from '../_servers.ts'

// A replica closing (Ctrl+C, a rolling restart) while its Redis keeps the
// connection but answers nothing waited for the replies of the calls in
// flight for as long as Redis stayed silent: the close never ended. It now
// gives Redis the store's timeout, then drops the connection.

it('closes within the store timeout while Redis answers nothing', async () => {
  const redis = await startRedis()
  const server = await startServer({
    seed: 1,
    customersPerAccount: 0,
    store: { url: redis.url, namespace: 'closing' },
  })
  redis.pause()
  // A write in flight, whose reply the close would wait for.
  const held = postCustomer(
    server.url,
    { name: 'Held', email: 'held@example.com' },
    { signal: AbortSignal.timeout(20_000) },
  ).catch(() => undefined)
  await new Promise((resolve) => setTimeout(resolve, 200))
  const closed = server.close().then(() => 'closed')
  const outcome = await Promise.race([
    closed,
    new Promise((resolve) => setTimeout(() => resolve('still open'), 12_000)),
  ])
  expect(outcome).toBe('closed')
  await held
}, 30_000)
