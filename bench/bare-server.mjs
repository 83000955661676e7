// The baseline: a bare node:http server doing the same JSON echo as
// POST /v1/customers (read the body, parse it, answer 201 with an id).
import { randomUUID } from 'node:crypto'
import { serveJson } from './json-server.mjs'

serveJson((body) => ({ id: `cus_${randomUUID().slice(0, 14)}`, ...body }))
