// The baseline: a bare node:http server doing the same JSON echo as
// POST /v1/customers (read the body, parse it, answer 201 with an id).
import { createServer } from 'node:http'
import { randomUUID } from 'node:crypto'

const server = createServer((req, res) => {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    let body
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
    res.writeHead(201, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ id: `cus_${randomUUID().slice(0, 14)}`, ...body }))
  })
})
server.listen(0, '127.0.0.1', () => {
  console.log(`http://127.0.0.1:${server.address().port}`)
})
