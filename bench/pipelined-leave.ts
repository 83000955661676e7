/**
 * `node --import tsx bench/pipelined-leave.ts [state|export|requests] [sockets] [pipelined] [customers] [read]`:
 * clients that pipeline admin reads, read nothing and leave (issue 29). A
 * server in a child process holds `customers` per account (default 5,000);
 * `sockets` connections (default 400) each send `pipelined` (default 20)
 * `GET /__sandbox/<path>` at once and read nothing; a second later all of
 * them close. A health check on a fresh connection every 100 ms measures how
 * long the server keeps clients waiting. Prints the requests handled before
 * and after the last socket closed, the slowest health answer during the
 * load and after it, how long after the close the server still worked on
 * requests, and the server's peak RSS and CPU time. With `read`, the
 * clients read every answer instead (500 of them asking for one export each
 * once held health for about 15 s): the load lasts until the last answer
 * is read.
 *
 * Measured on 2 cores shared with other work (load average 4-7), 400 × 20
 * at 5,000 customers per account, before and after issue 29:
 * - state: 4,467 reads handled after the close, the server busy 177 s and
 *   health unanswered 181 s, 1,003 MB; now at most 400 (the first of each
 *   connection, under way at the close), busy 1.3 s, health at worst 2.0 s
 *   during the load and 1.0 s after, 451 MB, 2.0 s of CPU.
 * - export: 6,220 after the close, busy 70 s, health 71 s, 1,207 MB, 60 s
 *   of CPU; now at most 400, busy 1.0 s, health 1.8 s and 0.8 s, 455 MB,
 *   2.1 s of CPU.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { loadavg } from 'node:os'

const cpuMsSince = (start: NodeJS.CpuUsage): number => {
  const { user, system } = process.cpuUsage(start)
  return Math.round((user + system) / 1000)
}

interface Report {
  /** Admin reads the server has answered (health checks aside). */
  handled: number
  rss: number
  /** CPU milliseconds (user and system) the server has used since it listened. */
  cpuMs: number
  /** Wall-clock ms when the report was taken. */
  at: number
}

if (process.argv[2] === '--serve') {
  const { createSandboxServer } = await import('../src/runtimes/node.ts')
  let handled = 0
  const server = await createSandboxServer({
    port: 0,
    playground: false,
    seed: 1,
    customersPerAccount: Number(process.argv[3]),
    onLog: (log) => {
      if (!log.path.endsWith('/health')) handled++
    },
  })
  process.send!({ port: server.port })
  const cpuAtStart = process.cpuUsage()
  const reporting = setInterval(() => {
    if (!process.connected) return
    const report: Report = {
      handled,
      rss: process.memoryUsage().rss,
      cpuMs: cpuMsSince(cpuAtStart),
      at: Date.now(),
    }
    // A parent that already left is no error worth a crash.
    process.send!(report, undefined, undefined, () => {})
  }, 50).unref()
  process.on('disconnect', () => {
    clearInterval(reporting)
    void server.close().then(() => process.exit())
  })
} else {
  const path = process.argv[2] ?? 'state'
  const sockets = Number(process.argv[3] ?? 400)
  const pipelined = Number(process.argv[4] ?? 20)
  const customers = Number(process.argv[5] ?? 5000)
  const reading = process.argv[6] === 'read'
  const child: ChildProcess = fork(
    fileURLToPath(import.meta.url),
    ['--serve', String(customers)],
    {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  )
  const [{ port }] = (await once(child, 'message')) as [{ port: number }]
  const reports: Report[] = []
  child.on('message', (message: Report) => reports.push(message))

  // One health check on a fresh connection; resolves with its milliseconds.
  const health = (): Promise<number> =>
    new Promise((resolve) => {
      const started = performance.now()
      const socket = connect(port, '127.0.0.1')
      socket.on('error', () => resolve(Number.POSITIVE_INFINITY))
      socket.once('data', () => {
        socket.destroy()
        resolve(performance.now() - started)
      })
      socket.write('GET /__sandbox/health HTTP/1.1\r\nHost: localhost\r\n\r\n')
    })
  const began = performance.now()
  // The longest wait a health check saw in a phase, open ones included.
  let phase = { worst: 0, open: new Set<number>() }
  const probe = setInterval(() => {
    const current = phase
    const started = performance.now()
    current.open.add(started)
    void health().then((ms) => {
      current.open.delete(started)
      current.worst = Math.max(current.worst, ms)
      if (process.env.BENCH_VERBOSE)
        console.error(
          `health at ${Math.round(started - began)} ms: ${Math.round(ms)} ms`,
        )
    })
  }, 100)
  const worstOf = (p: typeof phase): number =>
    Math.max(
      p.worst,
      ...[...p.open].map((started) => performance.now() - started),
    )

  const request = `GET /__sandbox/${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`
  const open: Socket[] = []
  await Promise.all(
    Array.from({ length: sockets }, async () => {
      const socket = connect(port, '127.0.0.1')
      socket.on('error', () => {})
      if (!reading) socket.pause()
      await once(socket, 'connect')
      if (!reading) {
        socket.write(request.repeat(pipelined))
        open.push(socket)
        return
      }
      // A client that reads every answer; the server closes after the last.
      socket.on('data', () => {})
      socket.write(
        request.repeat(pipelined - 1) +
          request.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'),
      )
      await once(socket, 'close')
    }),
  )
  if (!reading) await new Promise((resolve) => setTimeout(resolve, 1000))
  const load = phase
  phase = { worst: 0, open: new Set() }
  for (const socket of open) socket.destroy()
  const closedAt = performance.now()
  const closedWall = Date.now()
  // Until the server is quiet: its count still for 3 s, and no health check
  // waiting; a server that holds its event loop sends no reports meanwhile.
  let seen = -1
  let changedAt = performance.now()
  while (performance.now() - closedAt < 180_000) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    const handled = reports.at(-1)?.handled ?? 0
    if (handled !== seen) {
      seen = handled
      changedAt = performance.now()
    }
    const waiting = [...phase.open].some((t) => performance.now() - t > 500)
    if (!waiting && performance.now() - changedAt > 3000) break
  }
  clearInterval(probe)
  const after = phase
  // @note A server that holds its event loop reports late: what it handled
  // by the close is known only up to its last report before it, so the
  // count after the close is an upper bound.
  const handledAtClose = Math.max(
    0,
    ...reports.filter((r) => r.at <= closedWall).map((r) => r.handled),
  )
  const handledInAll = Math.max(0, ...reports.map((r) => r.handled))
  const peakRss = Math.max(0, ...reports.map((r) => r.rss))
  const cpuMs = Math.max(0, ...reports.map((r) => r.cpuMs))
  console.log(
    JSON.stringify(
      {
        path: `/__sandbox/${path}`,
        clients: reading
          ? 'read every answer'
          : 'read nothing, leave after 1 s',
        customersPerAccount: customers,
        sockets,
        pipelined,
        sent: sockets * pipelined,
        handledBeforeClose: handledAtClose,
        handledAfterCloseAtMost: handledInAll - handledAtClose,
        busyAfterCloseMs: Math.max(0, Math.round(changedAt - closedAt)),
        slowestHealthDuringLoadMs: Math.round(worstOf(load)),
        slowestHealthAfterCloseMs: Math.round(worstOf(after)),
        loadMs: Math.round(closedAt - began),
        peakRssMb: Math.round(peakRss / 1_048_576),
        serverCpuMs: cpuMs,
        // Other processes share the CPU: wall-clock figures grow with it.
        loadAverage: loadavg()[0]!.toFixed(1),
      },
      null,
      2,
    ),
  )
  child.disconnect()
}
