// The stack's floor: what any server storing a customer in an @msw/data
// Collection pays per request, before the sandbox's own work. The bare
// server's JSON echo plus one `create` of the sandbox's customer record, put
// in an index by id, with its primary key flattened, as the sandbox does.
import { createServer } from 'node:http'
import { randomUUID } from 'node:crypto'
import { Collection } from '@msw/data'
import { flattenKeys } from '../src/model/db.ts'
import {
  CustomerRecordSchema,
  type CustomerRecord,
} from '../src/model/schemas.ts'

const customers = new Collection({ schema: CustomerRecordSchema })
const byId = new Map<string, CustomerRecord>()

const server = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (chunk: Buffer) => chunks.push(chunk))
  req.on('end', async () => {
    let body: { name?: string; email?: string }
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    } catch {
      res.writeHead(400).end()
      return
    }
    if (!req.headers.authorization) {
      res.writeHead(401).end()
      return
    }
    const record = await customers.create({
      id: `cus_${randomUUID().slice(0, 14)}`,
      account_id: 'acct_DemoAccount001',
      name: body.name,
      email: body.email,
      created_at: new Date().toISOString(),
    })
    flattenKeys(record)
    byId.set(record.id, record)
    res.writeHead(201, { 'content-type': 'application/json' })
    res.end(
      JSON.stringify({ id: record.id, name: record.name, email: record.email }),
    )
  })
})
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  if (address && typeof address === 'object') {
    console.log(`http://127.0.0.1:${address.port}`)
  }
})
