import { setTimeout as sleep } from 'node:timers/promises'
import { expect, it } from 'vitest'
import { runCli } from '../_servers.ts'

// Seeding two million customers takes minutes. A stop asked for meanwhile
// (Ctrl-C, `docker stop`, `timeout`) waited for all of it before the process
// exited; nothing is served or stored before the server listens, so the
// process can stop at once.

it.each([
  ['SIGTERM', 143],
  ['SIGINT', 130],
] as const)(
  'stops at once on %s while seeding, before it listens',
  async (signal, code) => {
    const cli = runCli([
      '--port',
      '0',
      '--quiet',
      '--customers',
      '1000000',
      // Room for the seed: a start that fills a limit is refused at once.
      '--limits',
      'customersPerAccount=1000001,records=3000000',
    ])
    // Past node's start-up, so that the CLI's own handler hears the signal.
    await sleep(1000)
    cli.child.kill(signal)
    expect(await cli.exited).toBe(code)
    expect(cli.stdout()).not.toContain('http://')
    expect(cli.stderr()).toMatch(
      new RegExp(
        `^customer-token-sandbox: stopped by ${signal} before the server started\\n$`,
      ),
    )
  },
)
