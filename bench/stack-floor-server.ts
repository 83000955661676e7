// The stack's floor: the floor's work (one create of the sandbox's customer
// record in an @msw/data Collection) behind srvx's `serve`, read and
// answered as srvx documents it (`request.json()`, `Response.json()`). What
// the chosen request model costs before the sandbox's own work, beside the
// floor on bare node:http that the p99 budget is set against.
import { randomUUID } from 'node:crypto'
import { Collection } from '@msw/data'
import { serve } from 'srvx'
import { flattenKeys } from '../src/model/db.ts'
import {
  CustomerRecordSchema,
  type CustomerRecord,
} from '../src/model/schemas.ts'

const customers = new Collection({ schema: CustomerRecordSchema })
const byId = new Map<string, CustomerRecord>()

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
    const record = await customers.create({
      id: `cus_${randomUUID().slice(0, 14)}`,
      account_id: 'acct_DemoAccount001',
      name: body.name,
      email: body.email,
      created_at: new Date().toISOString(),
    })
    flattenKeys(record)
    byId.set(record.id, record)
    return Response.json(
      { id: record.id, name: record.name, email: record.email },
      { status: 201 },
    )
  },
})
await server.ready()
console.log(server.url!.replace(/\/$/, ''))
