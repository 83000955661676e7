// Runs once: every server here names its own store.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { once } from 'node:events'
import { expect, it, onTestFinished } from 'vitest'
import { startServer, tempDataFile } from '../_servers.ts'

// A server killed with SIGKILL stays a zombie until its parent reaps it, and
// for good under a PID 1 that never reaps (a container's shell); kill(pid, 0)
// still finds a zombie, so its data file was refused as "in use" meanwhile.

/** The pid of a process that has ended and that its parent never reaps. */
const zombie = async (): Promise<number> => {
  // @note `exec sleep` replaces the shell, so the ended child's parent is a
  // process that never waits for it.
  const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 30'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  onTestFinished(() => {
    parent.kill('SIGKILL')
  })
  const [line] = (await once(parent.stdout, 'data')) as [Buffer]
  const pid = Number(line.toString().trim())
  await expect
    .poll(
      async () =>
        (await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /s, '')[0],
    )
    .toBe('Z')
  return pid
}

it.skipIf(!existsSync('/proc/self/stat'))(
  'takes over the lock of a server that was killed and is a zombie',
  async () => {
    const file = await tempDataFile('cts-zombie-')
    const pid = await zombie()
    await writeFile(`${file}.lock`, String(pid))
    const server = await startServer({ seed: 1, dataFile: file })
    expect((await readFile(`${file}.lock`, 'utf8')).split(' ')[0]).toBe(
      String(process.pid),
    )
    expect((await fetch(`${server.url}/__sandbox/health`)).status).toBe(200)
  },
)

it.skipIf(!existsSync('/proc/self/stat'))(
  'still refuses a data file whose lock holder is alive',
  async () => {
    const file = await tempDataFile('cts-zombie-')
    const alive = spawn('sleep', ['30'], { stdio: 'ignore' })
    onTestFinished(() => {
      alive.kill('SIGKILL')
    })
    await writeFile(`${file}.lock`, String(alive.pid))
    await expect(startServer({ seed: 1, dataFile: file })).rejects.toThrow(
      `pid ${alive.pid}`,
    )
  },
)
