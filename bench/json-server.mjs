// The servers the bench measures the sandbox against: node:http reading a
// JSON body, refusing what the sandbox refuses first (bad JSON, no
// credential), and answering 201 with what `answer` makes of the body.
import { createServer } from 'node:http'

/**
 * Starts a baseline server on a free loopback port and prints its URL.
 *
 * @example
 * serveJson((body) => ({ id: 'cus_1', ...body }))
 */
export function serveJson(answer) {
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
      const reply = (value) => {
        res.writeHead(201, { 'content-type': 'application/json' })
        res.end(JSON.stringify(value))
      }
      // The bare server answers at once; only an answer that waits awaits.
      const value = answer(body)
      if (value instanceof Promise) value.then(reply)
      else reply(value)
    })
  })
  server.listen(0, '127.0.0.1', () => {
    console.log(`http://127.0.0.1:${server.address().port}`)
  })
}
