// The stack's floor: the floor's work (one create of the sandbox's customer
// record in an @msw/data Collection) behind srvx's `serve`, read and
// answered as srvx documents it (`request.json()`, `Response.json()`). What
// the chosen request model costs before the sandbox's own work, beside the
// floor on bare node:http that the p99 budget is set against.
import { serve } from 'srvx'
import { storeCustomer } from './_floor-create.ts'

const server = serve({
  port: 0,
  hostname: '127.0.0.1',
  silent: true,
  async fetch(request) {
    let body: { name?: string; email?: string }
    try {
      body = (await request.json()) as typeof body
    } catch {
      return new Response(null, { status: 400 })
    }
    if (!request.headers.get('authorization'))
      return new Response(null, { status: 401 })
    return Response.json(await storeCustomer(body), { status: 201 })
  },
})
await server.ready()
console.log(server.url!.replace(/\/$/, ''))
