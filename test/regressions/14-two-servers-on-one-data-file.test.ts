import { spawnSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { readDataFile } from '../../src/model/data-file.ts'
import { createSandboxServer } from '../../src/runtimes/node.ts'
import { spawnCli, type Spawned } from '../_spawn.ts'

const folders: string[] = []
const clis: Spawned[] = []
afterEach(async () => {
  for (const cli of clis.splice(0)) cli.child.kill('SIGKILL')
  for (const folder of folders.splice(0))
    await rm(folder, { recursive: true, force: true })
})

const start = (file: string): Spawned => {
  const cli = spawnCli(['--port', '0', '--quiet', '--data-file', file])
  clis.push(cli)
  return cli
}
const urlOf = async (cli: Spawned) => (await cli.waitFor(/http:\/\/\S+/))[0]
const tempFile = async () => {
  const folder = await mkdtemp(join(tmpdir(), 'cts-lock-'))
  folders.push(folder)
  return join(folder, 'data.json')
}

it('refuses to start a second server on the same data file, naming the file and the holder', async () => {
  const file = await tempFile()
  const first = start(file)
  const url = await urlOf(first)

  const second = start(file)
  expect(await second.exited).toBe(1)
  const lines = second.stderr().trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toContain(file)
  expect(lines[0]).toContain(`pid ${first.child.pid}`)

  // The first server goes on storing its writes.
  const response = await fetch(`${url}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name: 'Kept', email: 'kept@example.com' }),
  })
  expect(response.status).toBe(201)
  const { id } = await response.json()
  first.child.kill('SIGTERM')
  expect(await first.exited).toBe(0)
  const data = (await readDataFile(file)) as { customers: { id: string }[] }
  expect(data.customers.map((c) => c.id)).toContain(id)
  // Released on close: the next server starts.
  await urlOf(start(file))
})

it('takes over the lock of a server that died without releasing it', async () => {
  const file = await tempFile()
  // A pid that has just ended.
  const dead = spawnSync(process.execPath, ['-e', '']).pid
  await writeFile(`${file}.lock`, String(dead))

  const cli = start(file)
  await urlOf(cli)
  expect(await readFile(`${file}.lock`, 'utf8')).toBe(String(cli.child.pid))
  cli.child.kill('SIGTERM')
  expect(await cli.exited).toBe(0)
  await expect(readFile(`${file}.lock`, 'utf8')).rejects.toThrow(/ENOENT/)
})

it('gives the lock back when the server cannot listen', async () => {
  const file = await tempFile()
  const other = await createSandboxServer({ port: 0, playground: false })
  try {
    await expect(
      createSandboxServer({
        port: other.port,
        playground: false,
        dataFile: file,
      }),
    ).rejects.toThrow(/already in use/)
    await expect(readFile(`${file}.lock`, 'utf8')).rejects.toThrow(/ENOENT/)
    const server = await createSandboxServer({
      port: 0,
      playground: false,
      dataFile: file,
    })
    await server.close()
  } finally {
    await other.close()
  }
})
