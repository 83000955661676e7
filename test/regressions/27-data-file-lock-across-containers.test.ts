// Runs once: every server here names its own store.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, stat, utimes, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { expect, it } from 'vitest'
import { readDataFile } from '../../src/model/data-file.ts'
import {
  createNamed,
  runCli,
  startCli,
  startServer,
  tempDataFile,
} from '../_servers.ts'

// Two containers on one volume: each server is pid 1 in a PID namespace of
// its own, so a lock holding a pid told the second one nothing (its own pid,
// or one it cannot see). It took the lock over and rewrote the data file,
// and the first server went on appending to the file the rewrite replaced:
// every write it answered 201 after that was lost.

const args = (file: string) => ['--port', '0', '--quiet', '--data-file', file]

// `unshare --pid` needs root (or user namespaces) and Linux.
const canUnshare =
  existsSync('/proc/self/ns/pid') &&
  spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0

it('refuses a second server in another PID namespace on the same data file, and the first one keeps its writes', async () => {
  // @note Run, never skipped: a machine without PID namespaces says so.
  expect(canUnshare, 'this test needs `unshare --pid` (Linux, as root)').toBe(
    true,
  )
  const file = await tempDataFile('cts-ns-lock-')
  const first = await startCli(args(file), { ownPidNamespace: true })

  const second = runCli(args(file), { ownPidNamespace: true })
  const outcome = await Promise.race([
    second.exited,
    second.waitFor(/http:\/\//).then(() => 'started'),
  ])
  expect(outcome).toBe(1)
  const lines = second.stderr().trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toContain(`${file} is in use by another sandbox server`)
  expect(lines[0]).toContain('pid 1 in another PID namespace')

  const response = await createNamed(first.url, 'Kept')
  expect(response.status).toBe(201)
  const { id } = (await response.json()) as { id: string }
  // SIGKILL to `unshare` is SIGTERM to the server: it closes and unlocks.
  first.child.kill('SIGKILL')
  await expect
    .poll(() => existsSync(`${file}.lock`), { timeout: 10_000 })
    .toBe(false)
  const data = (await readDataFile(file)) as { customers: { id: string }[] }
  expect(data.customers.map((c) => c.id)).toContain(id)
})

/** A lock as a server on `host` in another PID namespace writes it. */
const foreignLock = (host: string) =>
  `1 ${host} 4026531836 0badc0de ${Math.floor(Date.now() / 1000) - 60}`

it('refuses a data file whose lock a server on another host refreshed just now, saying who holds it and when it can be taken', async () => {
  const file = await tempDataFile('cts-ns-lock-')
  const lock = foreignLock('other-host')
  await writeFile(`${file}.lock`, lock)

  const refusal = startServer({ dataFile: file })
  await expect(refusal).rejects.toThrow(
    `${file} is in use by another sandbox server (pid 1 on host other-host, lock file ${file}.lock) since `,
  )
  await expect(refusal).rejects.toThrow(
    'its lock is taken over 10 s after its last refresh',
  )
  expect(await readFile(`${file}.lock`, 'utf8')).toBe(lock)
})

it('refuses a lock refreshed just now by a server in another PID namespace on this host', async () => {
  const file = await tempDataFile('cts-ns-lock-')
  const host = hostname().replace(/\s+/g, '_').slice(0, 16)
  await writeFile(`${file}.lock`, foreignLock(host))
  await expect(startServer({ dataFile: file })).rejects.toThrow(
    /pid 1 (in another PID namespace|on another machine)/,
  )
})

it('takes over the lock of a server in another container once it has not refreshed it for 10 s', async () => {
  const file = await tempDataFile('cts-ns-lock-')
  await writeFile(`${file}.lock`, foreignLock('other-host'))
  const old = new Date(Date.now() - 11_000)
  await utimes(`${file}.lock`, old, old)

  const server = await startServer({ dataFile: file })
  expect((await fetch(`${server.url}/__sandbox/health`)).status).toBe(200)
  const [pid] = (await readFile(`${file}.lock`, 'utf8')).split(' ')
  expect(pid).toBe(String(process.pid))
})

it('refreshes its lock while it runs, so that a server in another container sees it alive', async () => {
  const file = await tempDataFile('cts-ns-lock-')
  await startServer({ dataFile: file })
  const old = new Date(Date.now() - 60_000)
  await utimes(`${file}.lock`, old, old)
  await expect
    .poll(async () => Date.now() - (await stat(`${file}.lock`)).mtimeMs, {
      timeout: 5_000,
    })
    .toBeLessThan(3_000)
})
