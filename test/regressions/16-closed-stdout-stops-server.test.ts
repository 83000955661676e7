import { expect, it } from 'vitest'
import { createFiller, startCli, tempDataFile } from '../_servers.ts'

// The reader of the server's output goes away (`customer-token-sandbox |
// head -1`, or a parent that spawned it with a pipe and exited): the next
// log line failed with EPIPE as an unhandled 'error' event, and the server
// died with it.

it.each([[[]], [['--log-format', 'json']]])(
  'keeps serving after its stdout closed, logging %j',
  async (logArgs) => {
    const cli = await startCli(['--port', '0', ...logArgs])
    cli.child.stdout!.destroy()

    // Each request writes a log line to the closed pipe.
    for (let n = 0; n < 20; n++)
      expect((await createFiller(cli.url, n)).status).toBe(201)

    const health = await fetch(`${cli.url}/__sandbox/health`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: 'ok' })
    expect(cli.child.exitCode).toBeNull()
    expect(cli.child.signalCode).toBeNull()
    expect(cli.stderr()).toContain(
      'stdout closed (EPIPE): the request log stops, the server keeps serving',
    )
    expect(cli.stderr()).not.toMatch(/\n\s+at /)

    // It still stops cleanly.
    expect(await cli.stop()).toBe(0)
  },
)

it(
  'keeps serving after its stderr closed, when it reports a full disk there',
  { timeout: 30_000 },
  async () => {
    // A disk that fills up without root, as in 14-disk-full-with-data-file:
    // every refused write is reported on stderr.
    const dataFile = await tempDataFile('cts-stderr-')
    const cli = await startCli(
      ['--port', '0', '--quiet', '--customers', '5', '--data-file', dataFile],
      { fileSizeLimitKb: 48 },
    )
    cli.child.stderr!.destroy()

    // Two outages, each reported on the closed stderr: fill the file,
    // free it with a reset (a small snapshot fits), fill it again.
    for (let outage = 0; outage < 2; outage++) {
      const statuses = new Set<number>()
      for (let n = 0; n < 400 && !statuses.has(503); n++)
        statuses.add((await createFiller(cli.url, n)).status)
      expect(statuses).toContain(503)
      expect(
        (await fetch(`${cli.url}/__sandbox/reset`, { method: 'POST' })).status,
      ).toBe(200)
    }

    const health = await fetch(`${cli.url}/__sandbox/health`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: 'ok' })
    expect(cli.child.exitCode).toBeNull()
    expect(cli.child.signalCode).toBeNull()
    expect(await cli.stop()).toBe(0)
  },
)
