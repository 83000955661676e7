import { execFileSync } from 'node:child_process'
import { constants } from 'node:fs'
import { open } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { expect, it } from 'vitest'
import { runMain, tempFolder } from '../_servers.ts'

// `--config` or `--from` naming a FIFO (or a device) opened it and waited
// for a writer forever, silent; Ctrl-C printed "stopped by SIGINT" but the
// process went on waiting, as its exit waited for the blocked open.

it.each([['--config'], ['--from']])(
  '%s naming a FIFO is refused at once, exit 2',
  async (flag) => {
    const fifo = join(await tempFolder('cts-fifo-'), 'options.json')
    execFileSync('mkfifo', [fifo])
    const run = runMain([flag, fifo, '--port', '0', '--quiet'])
    const outcome = await Promise.race([run, sleep(3000, 'waiting')])
    if (outcome === 'waiting') {
      // Lets the old code's open go on, so that the test ends.
      const writer = await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK)
      await writer.write('{}')
      await writer.close()
      await run
    }
    expect(outcome).not.toBe('waiting')
    const [stderr, exitCode] = outcome as [string, number]
    expect(exitCode).toBe(2)
    expect(stderr.split('\n')[0]).toBe(
      `customer-token-sandbox: cannot read ${flag} ${fifo}: it is not a regular file. ${flag === '--config' ? 'Give --config the path of a JSON file.' : 'Give the path of a session file.'}`,
    )
  },
)
