// Runs once: every server here names its own store.
import { readFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { LEDGER } from '../../src/contract.ts'
import {
  customerNames,
  postCustomer,
  startCli,
  startServer,
  tempDataFile,
} from '../_servers.ts'

// A retry with an Idempotency-Key sent to a server with --data-file after it
// restarted created the customer a second time: the keys lived in memory
// only. The data file now keeps each answered key with the record it
// replays, so the retry is a replay, after a clean stop or a kill -9.

const keyed = (url: string, key: string, name = 'Ada') =>
  postCustomer(
    url,
    { name, email: 'ada@example.com' },
    { headers: { 'idempotency-key': key } },
  )

it('replays a keyed create after the server restarted on its data file', async () => {
  const row = LEDGER.find((assumption) => assumption.id === 'idempotency')!
  expect(row.default).toContain('is still a replay')

  const dataFile = await tempDataFile('cts-idem-')
  const first = await startServer({ dataFile, customersPerAccount: 0 })
  const created = await keyed(first.url, 'order-42')
  expect(created.status).toBe(201)
  const body = await created.text()
  await first.close()

  const again = await startServer({ dataFile, customersPerAccount: 0 })
  const after = await keyed(again.url, 'order-42')
  expect(after.status).toBe(201)
  expect(after.headers.get('idempotent-replayed')).toBe('true')
  expect(await after.text()).toBe(body)
  expect(await customerNames(again.url)).toEqual(['Ada'])

  // The same key with another body is still refused as reused.
  const reused = await keyed(again.url, 'order-42', 'Grace')
  expect(reused.status).toBe(422)
  expect(((await reused.json()) as { code: string }).code).toBe(
    'idempotency_key_reused',
  )
})

it('keeps a replayed 409 email_taken across a restart', async () => {
  const dataFile = await tempDataFile('cts-idem-')
  const first = await startServer({
    dataFile,
    customersPerAccount: 0,
    uniqueEmail: true,
  })
  expect((await keyed(first.url, 'first')).status).toBe(201)
  const refused = await keyed(first.url, 'second')
  expect(refused.status).toBe(409)
  await first.close()

  const again = await startServer({
    dataFile,
    customersPerAccount: 0,
    uniqueEmail: true,
  })
  const replayed = await keyed(again.url, 'second')
  expect(replayed.status).toBe(409)
  expect(replayed.headers.get('idempotent-replayed')).toBe('true')
})

it(
  'loses no acknowledged create and duplicates no keyed retry after kill -9 under load',
  { timeout: 60_000 },
  async () => {
    const file = await tempDataFile('cts-kill-')
    const args = ['--port', '0', '--quiet', '--customers', '0']
    const cli = await startCli([...args, '--data-file', file])
    // Keyed creates from 8 loops; the process is killed while they run.
    const acknowledged = new Map<string, string>()
    let next = 0
    const run = { killed: false }
    const loops = Array.from({ length: 8 }, async () => {
      while (!run.killed) {
        const key = `load-${next++}`
        try {
          const response = await keyed(cli.url, key, `Load ${key}`)
          if (response.status === 201)
            acknowledged.set(
              key,
              ((await response.json()) as { id: string }).id,
            )
        } catch {
          return
        }
      }
    })
    while (acknowledged.size < 200) await new Promise((r) => setTimeout(r, 5))
    run.killed = true
    cli.child.kill('SIGKILL')
    await Promise.all(loops)
    await cli.exited
    expect((await readFile(file, 'utf8')).length).toBeGreaterThan(0)

    const restarted = await startCli([...args, '--data-file', file])
    const stored = await customerNames(restarted.url)
    for (const key of acknowledged.keys())
      expect(stored).toContain(`Load ${key}`)
    // Every key sent, acknowledged or cut off, retried once: each name once.
    for (let key = 0; key < next; key++) {
      const response = await keyed(
        restarted.url,
        `load-${key}`,
        `Load load-${key}`,
      )
      expect(response.status).toBe(201)
      const id = ((await response.json()) as { id: string }).id
      const first = acknowledged.get(`load-${key}`)
      if (first !== undefined) {
        expect(id).toBe(first)
        expect(response.headers.get('idempotent-replayed')).toBe('true')
      }
    }
    const after = await customerNames(restarted.url)
    expect(new Set(after).size).toBe(after.length)
    expect(after.length).toBe(next)
    expect(await restarted.stop()).toBe(0)
  },
)
