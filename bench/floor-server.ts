// The stack's floor: what any server storing a customer in an @msw/data
// Collection pays per request, before the sandbox's own work. The bare
// server's JSON echo plus one `create` of the sandbox's customer record, put
// in an index by id, with its primary key flattened, as the sandbox does.
import { storeCustomer } from './_floor-create.ts'
import { serveJson } from './json-server.mjs'

serveJson((body: { name?: string; email?: string }) => storeCustomer(body))
