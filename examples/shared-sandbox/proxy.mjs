#!/usr/bin/env node
// A small round-robin reverse proxy on node:http, standing in for the load
// balancer in front of a team's replicas: each request goes to the next
// replica in turn, so consecutive calls land on different processes.
// `node proxy.mjs [--port 8080] http://127.0.0.1:4001 http://127.0.0.1:4002`
// runs it on its own; start.mjs imports createRoundRobinProxy.
import { Agent, createServer, request } from 'node:http'
import { pathToFileURL } from 'node:url'

// Headers about one connection, not the message: never forwarded (RFC 9110,
// section 7.6.1). Node sets its own framing on each side.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
])

function forwardable(headers) {
  const kept = {}
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && !HOP_BY_HOP.has(name)) kept[name] = value
  return kept
}

function badGateway(response, target, error) {
  if (response.headersSent) {
    // @note The replica died mid-answer: the client must see a cut answer,
    // not a complete-looking one.
    response.destroy(error)
    return
  }
  const body = JSON.stringify({
    error: 'bad_gateway',
    message: `The replica at ${target} did not answer: ${error.code ?? error.message}.`,
  })
  response.writeHead(502, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  })
  response.end(body)
}

/**
 * Starts a round-robin reverse proxy on `host`:`port` (a free port by
 * default) in front of `targets`, and resolves once it listens.
 *
 * @example
 * const proxy = await createRoundRobinProxy(['http://127.0.0.1:4001', 'http://127.0.0.1:4002'])
 * await fetch(`${proxy.url}/__sandbox/health`)
 * await proxy.close()
 */
export async function createRoundRobinProxy(
  targets,
  { port = 0, host = '127.0.0.1' } = {},
) {
  if (targets.length === 0)
    throw new RangeError('Failed to start the proxy: no targets were given.')
  const upstreams = targets.map((target) => new URL(target))
  // @note Its own agent, so close() also ends the kept-alive connections to
  // the replicas and the process can exit.
  const agent = new Agent({ keepAlive: true })
  let next = 0

  const server = createServer((incoming, response) => {
    // @note The turn moves on whatever happens to this request, so a replica
    // that is down costs one 502 and the next request goes to the next one.
    const upstream = upstreams[next]
    next = (next + 1) % upstreams.length
    const outgoing = request(
      {
        agent,
        protocol: upstream.protocol,
        hostname: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: forwardable(incoming.headers),
      },
      (answer) => {
        response.writeHead(
          answer.statusCode ?? 502,
          answer.statusMessage,
          forwardable(answer.headers),
        )
        answer.pipe(response)
        answer.on('error', (error) =>
          badGateway(response, upstream.origin, error),
        )
      },
    )
    outgoing.on('error', (error) =>
      badGateway(response, upstream.origin, error),
    )
    // @note A client that goes away before its answer is complete takes its
    // replica request with it.
    response.on('close', () => {
      if (!response.writableFinished) outgoing.destroy()
    })
    incoming.pipe(outgoing)
  })

  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address()
  const url = `http://${host}:${address.port}`
  let closed
  return {
    url,
    close() {
      closed ??= new Promise((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
        agent.destroy()
      })
      return closed
    },
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2)
  let port = 0
  const portAt = args.indexOf('--port')
  if (portAt !== -1) [, port] = args.splice(portAt, 2)
  try {
    const proxy = await createRoundRobinProxy(args, { port: Number(port) })
    process.stdout.write(`${proxy.url}\n`)
    const stop = () => proxy.close()
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  } catch (error) {
    process.stderr.write(`proxy: ${error.message}\n`)
    process.exitCode = 1
  }
}
