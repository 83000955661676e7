import { expect, it } from 'vitest'
import { startMisbehaving } from '../_misbehaving.ts'
import { startServer, verifyAgainst } from '../_servers.ts'

// A 302 loop once got 63 requests while verify reported "3 requests sent",
// and a 307 to another origin had every POST re-sent there: 20 records were
// created on a host nobody named, and its answers graded as the target's.

it('counts every hop of a redirect loop against --max-requests and reports the requests the service got', async () => {
  const loop = await startMisbehaving({ kind: 'redirect-loop' })
  const { exitCode, report } = await verifyAgainst(
    loop.url,
    '--max-requests',
    '30',
  )
  expect(exitCode).toBe(3)
  expect(report).toMatch(
    /the service redirected POST \/v1\/customers 6 times in a row \(last to http:\/\/127\.0\.0\.1:\d+\/v1\/customers\): not followed further/,
  )
  const sent = Number(/(\d+) requests? sent to /.exec(report)?.[1])
  expect(sent).toBe(loop.requests)
  expect(sent).toBeLessThanOrEqual(30)
})

it('stops a redirect loop at --max-requests, hops included', async () => {
  const loop = await startMisbehaving({ kind: 'redirect-loop' })
  const { report } = await verifyAgainst(loop.url, '--max-requests', '4')
  expect(loop.requests).toBe(4)
  expect(report).toContain('4 requests sent to ')
  expect(report).toContain(
    "--max-requests (4) reached while following the service's redirects",
  )
})

it('does not follow a 307 to another origin, names the location, and creates nothing there', async () => {
  const elsewhere = await startServer({ customersPerAccount: 0 })
  const redirecting = await startMisbehaving({
    kind: 'redirect',
    location: `${elsewhere.url}/v1/customers`,
  })
  const { exitCode, report } = await verifyAgainst(redirecting.url)
  expect(exitCode).toBe(3)
  expect(report).toContain(
    `the service redirected POST /v1/customers (307) to another origin, ${elsewhere.url}/v1/customers: not followed`,
  )
  expect(elsewhere.sandbox.customers.count()).toBe(0)
  expect(elsewhere.sandbox.journal.list()).toHaveLength(0)
  const host = new URL(redirecting.url).host
  expect(report).toMatch(
    new RegExp(`\\d+ requests? sent to ${host}, 0 records created there`),
  )
})

it('names the host every record was created on', async () => {
  const service = await startServer({ customersPerAccount: 0 })
  const { report } = await verifyAgainst(service.url)
  const created = Number(
    new RegExp(
      `requests sent to ${new URL(service.url).host}, (\\d+) records created there`,
    ).exec(report)?.[1],
  )
  expect(created).toBeGreaterThan(0)
  expect(
    service.sandbox.customers.count() + service.sandbox.state().tokens.length,
  ).toBe(created)
})
