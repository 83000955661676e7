// The stack's floor: what any server storing a customer in an @msw/data
// Collection pays per request, before the sandbox's own work. The bare
// server's JSON echo plus one `create` of the sandbox's customer record, put
// in an index by id, with its primary key flattened, as the sandbox does.
import { randomUUID } from 'node:crypto'
import { Collection } from '@msw/data'
import { flattenKeys } from '../src/model/db.ts'
import {
  CustomerRecordSchema,
  type CustomerRecord,
} from '../src/model/schemas.ts'
import { serveJson } from './json-server.mjs'

const customers = new Collection({ schema: CustomerRecordSchema })
const byId = new Map<string, CustomerRecord>()

serveJson(async (body: { name?: string; email?: string }) => {
  const record = await customers.create({
    id: `cus_${randomUUID().slice(0, 14)}`,
    account_id: 'acct_DemoAccount001',
    name: body.name,
    email: body.email,
    created_at: new Date().toISOString(),
  })
  flattenKeys(record)
  byId.set(record.id, record)
  return { id: record.id, name: record.name, email: record.email }
})
