// Runs once: every server here names its own store.
import { spawn } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { startServer, tempDataFile } from '../_servers.ts'

// A server killed with `kill -9` leaves its lock behind. In a container the
// next server often gets the same pid (1, or another small one), and after a
// reboot any process may have it.

it('takes over a lock that holds its own pid, left by a killed server that had the same pid', async () => {
  const file = await tempDataFile('cts-pid-')
  await writeFile(`${file}.lock`, String(process.pid))

  const server = await startServer({ dataFile: file })
  const health = await fetch(`${server.url}/__sandbox/health`)
  expect(health.status).toBe(200)
  expect((await readFile(`${file}.lock`, 'utf8')).split(' ')[0]).toBe(
    String(process.pid),
  )
  await server.close()
  await expect(readFile(`${file}.lock`, 'utf8')).rejects.toThrow(/ENOENT/)
})

it('says how to clear a lock whose pid now belongs to another process', async () => {
  const file = await tempDataFile('cts-pid-')
  const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'])
  const exited = new Promise((resolve) => other.once('exit', resolve))
  try {
    await writeFile(`${file}.lock`, String(other.pid))
    const refusal = startServer({ dataFile: file })
    await expect(refusal).rejects.toThrow(`pid ${other.pid}`)
    await expect(refusal).rejects.toThrow(
      `If pid ${other.pid} is not a sandbox server, delete ${file}.lock`,
    )
    // The lock is left as it was.
    expect(await readFile(`${file}.lock`, 'utf8')).toBe(String(other.pid))
  } finally {
    other.kill()
    await exited
  }
})

it('still refuses a second server in the same process on the same data file', async () => {
  const file = await tempDataFile('cts-pid-')
  const first = await startServer({ dataFile: file })
  await expect(startServer({ dataFile: file })).rejects.toThrow(
    `pid ${process.pid}`,
  )
  expect((await fetch(`${first.url}/__sandbox/health`)).status).toBe(200)
  expect((await readFile(`${file}.lock`, 'utf8')).split(' ')[0]).toBe(
    String(process.pid),
  )
})
