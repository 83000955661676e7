// The floor's one piece of work, shared by the floor servers: what any
// server storing a customer in an @msw/data Collection pays per request.
import { randomUUID } from 'node:crypto'
import { Collection } from '@msw/data'
import { flattenKeys } from '../src/model/db.ts'
import {
  CustomerRecordSchema,
  type CustomerRecord,
} from '../src/model/schemas.ts'

const customers = new Collection({ schema: CustomerRecordSchema })
const byId = new Map<string, CustomerRecord>()

/**
 * Stores one customer of `body` as the sandbox does (a `create` of its
 * customer record, put in an index by id, with its primary key flattened),
 * and gives what the answer shows of it.
 *
 * @example
 * serveJson((body) => storeCustomer(body))
 */
export async function storeCustomer(body: {
  name?: string
  email?: string
}): Promise<Pick<CustomerRecord, 'id' | 'name' | 'email'>> {
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
}
