import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { readSessionFile } from '../../src/model/session-file.ts'
import type { RecordedExchange } from '../../src/model/session-file.ts'
import { postCustomer, runCli, startServer, tempFolder } from '../_servers.ts'

// On a full disk record once left the exchange it was writing as a torn line
// and counted it saved ("5 exchanges saved" for a file holding 4): an
// exchange appended once space came back was glued to that torn line and lost
// with it. The failing line is now cut off again, and the summary counts the
// exchanges answered but not saved, with the reason.

// A real full disk without root: under `ulimit -f` a write past the size is
// cut short, and the next fails with EFBIG, as one does with ENOSPC.
const LIMIT_KB = 24

it(
  'keeps every line of the session whole and counts what a full disk refused',
  { timeout: 30_000 },
  async () => {
    const service = await startServer({ customersPerAccount: 0 })
    const file = join(await tempFolder('cts-record-full-'), 'session.jsonl')
    const cli = runCli(
      ['record', '--target', service.url, '--port', '0', '--out', file],
      { fileSizeLimitKb: LIMIT_KB },
    )
    const [, url] = await cli.waitFor(/through (http:\/\/\S+)/)
    const calls = 12
    for (let n = 0; n < calls; n++) {
      const answer = await postCustomer(url!, {
        name: `Full ${n} ${'x'.repeat(1500)}`.slice(0, 80),
        email: `full${n}@example.com`,
        note: 'y'.repeat(1500),
      })
      await answer.arrayBuffer()
    }
    // @note Ctrl-C waits for the exchanges still being saved.
    expect(await cli.stop('SIGINT')).toBe(0)
    const summary =
      /(\d+) exchanges? saved to .*; (\d+) answered but not saved \((.+)\)/.exec(
        cli.stdout(),
      )
    expect(summary?.[3]).toBe(
      'the file is larger than this file system allows (EFBIG)',
    )
    const saved = Number(summary?.[1])
    expect(saved).toBeGreaterThan(0)
    expect(saved + Number(summary?.[2])).toBe(calls)
    expect(cli.stderr()).toContain(
      `was answered but not saved to ${file} (the file is larger than this file system allows (EFBIG)); the file keeps the ${saved} saved before it`,
    )
    const text = await readFile(file, 'utf8')
    expect(text.endsWith('\n')).toBe(true)
    const session = (await readSessionFile(file, '--from')) as {
      recorded: { exchanges: RecordedExchange[]; torn_lines?: number }
    }
    expect(session.recorded.torn_lines).toBeUndefined()
    expect(session.recorded.exchanges).toHaveLength(saved)
  },
)
