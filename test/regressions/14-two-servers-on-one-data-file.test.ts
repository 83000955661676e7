import { spawnSync } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { readDataFile } from '../../src/model/data-file.ts'
import { runCli, startCli, startServer, tempDataFile } from '../_servers.ts'

const args = (file: string) => ['--port', '0', '--quiet', '--data-file', file]

it('refuses to start a second server on the same data file, naming the file and the holder', async () => {
  const file = await tempDataFile('cts-lock-')
  const first = await startCli(args(file))

  const second = runCli(args(file))
  expect(await second.exited).toBe(1)
  const lines = second.stderr().trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toContain(file)
  expect(lines[0]).toContain(`pid ${first.child.pid}`)

  // The first server goes on storing its writes.
  const response = await fetch(`${first.url}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name: 'Kept', email: 'kept@example.com' }),
  })
  expect(response.status).toBe(201)
  const { id } = await response.json()
  expect(await first.stop()).toBe(0)
  const data = (await readDataFile(file)) as { customers: { id: string }[] }
  expect(data.customers.map((c) => c.id)).toContain(id)
  // Released on close: the next server starts.
  await startCli(args(file))
})

it('takes over the lock of a server that died without releasing it', async () => {
  const file = await tempDataFile('cts-lock-')
  // A pid that has just ended.
  const dead = spawnSync(process.execPath, ['-e', '']).pid
  await writeFile(`${file}.lock`, String(dead))

  const cli = await startCli(args(file))
  expect((await readFile(`${file}.lock`, 'utf8')).split(' ')[0]).toBe(
    String(cli.child.pid),
  )
  expect(await cli.stop()).toBe(0)
  await expect(readFile(`${file}.lock`, 'utf8')).rejects.toThrow(/ENOENT/)
})

it('gives the lock back when the server cannot listen', async () => {
  const file = await tempDataFile('cts-lock-')
  const other = await startServer()
  await expect(
    startServer({ port: other.port, dataFile: file }),
  ).rejects.toThrow(/already in use/)
  await expect(readFile(`${file}.lock`, 'utf8')).rejects.toThrow(/ENOENT/)
  const server = await startServer({ dataFile: file })
  await server.close()
})
