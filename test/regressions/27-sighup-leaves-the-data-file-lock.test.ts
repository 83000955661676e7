// Runs once: every server here names its own store.
import { access } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { readDataFile } from '../../src/runtimes/node.ts'
import { postCustomer, startCli, tempFolder } from '../_servers.ts'

// The terminal that started a server closed (an SSH session dropped): the
// SIGHUP it got ended it at once, as no one listened for it, with the data
// file's lock left behind and the snapshot of its close never written.

it('stops cleanly on SIGHUP, as on SIGTERM: lock removed, data kept, exit 0', async () => {
  const file = join(await tempFolder('cts-sighup-'), 'data.jsonl')
  const cli = await startCli(['--port', '0', '--quiet', '--data-file', file])
  const created = await postCustomer(cli.url, {
    name: 'Ada',
    email: 'ada@example.com',
  })
  expect(created.status).toBe(201)
  const { id } = (await created.json()) as { id: string }
  expect(await cli.stop('SIGHUP')).toBe(0)
  await expect(access(`${file}.lock`)).rejects.toThrow(/ENOENT/)
  const saved = (await readDataFile(file)) as { customers: { id: string }[] }
  expect(saved.customers.map((customer) => customer.id)).toContain(id)
})
