/**
 * `node --import tsx bench/onlog-memory.ts [N]`: the heap of a server with
 * its request log on (`onLog`, as the CLI without --quiet) before and after N
 * (default 100,000) requests that a scenario answers with a network error,
 * each after a full garbage collection. Prints the ratio; it should stay near
 * 1.00 (the server once kept an entry per such request: 47 MB per 100k).
 */
import { request } from 'node:http'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import { createSandboxServer } from '../src/runtimes/node.ts'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
const total = Number(process.argv[2] ?? 100_000)
const WARM_UP = 2000
let logs = 0
const server = await createSandboxServer({
  port: 0,
  playground: false,
  onLog: () => logs++,
})
server.sandbox.scenarios.next('createCustomer', {
  networkError: true,
  times: total + WARM_UP,
})

const dropped = (): Promise<void> =>
  new Promise((resolve) => {
    const req = request(
      {
        port: server.port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/v1/customers',
        agent: false,
        headers: {
          authorization: `Bearer ${DEMO_KEY_ONE}`,
          'content-type': 'application/json',
        },
      },
      () => resolve(),
    )
    req.on('error', () => resolve())
    req.end('{"name":"Ada","email":"ada@example.com"}')
  })
const heapMb = (): number => {
  gc()
  gc()
  return process.memoryUsage().heapUsed / 1_048_576
}

for (let i = 0; i < WARM_UP; i++) await dropped()
const before = heapMb()
let sent = 0
await Promise.all(
  Array.from({ length: 16 }, async () => {
    while (sent < total) {
      sent++
      await dropped()
    }
  }),
)
const after = heapMb()
await server.close()
console.log(
  `onLog memory: ${total} network_error requests, ${logs} log lines; heap ${before.toFixed(1)} MB before, ${after.toFixed(1)} MB after: ${(after / before).toFixed(2)}×`,
)
