import { readFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { recordMisbehaving } from '../_servers.ts'

// Found by recording a service whose answer streams on without a pause:
// `record --timeout 2000` passed 2.2 GB to the client in 40 s and never cut
// the answer; the file said only that the client left. The timeout was an
// AbortSignal.timeout() inside AbortSignal.any(), and Node holds such a
// signal only weakly: a garbage collection before the deadline (many of
// them, when answers stream fast) dropped it, and it never fired. An answer
// that never came was waited for without end the same way. The timeout is a
// timer of the exchange's own now.

/** Reads the whole answer; how it ended and how many bytes came. */
async function readToTheEnd(
  answer: Response,
): Promise<{ bytes: number; ended: 'done' | 'cut' }> {
  const reader = answer.body!.getReader()
  let bytes = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return { bytes, ended: 'done' }
      bytes += value.byteLength
    }
  } catch {
    return { bytes, ended: 'cut' }
  }
}

it('cuts an answer that streams without pause at --timeout, and saves it with a note', async () => {
  const { cli, file, url } = await recordMisbehaving(
    { kind: 'endless' },
    'cts-endless-',
    ['--timeout', '1000', '--max-body', '1MB'],
  )
  const answer = await fetch(`${url}/v1/customers`)
  expect(answer.status).toBe(201)
  // Before, this read went on until the test timed out.
  const { bytes, ended } = await readToTheEnd(answer)
  expect(ended).toBe('cut')
  expect(bytes).toBeGreaterThan(1024 * 1024)
  await cli.waitFor(/GET \/v1\/customers 201/)
  const [, line] = (await readFile(file, 'utf8')).split('\n')
  const { response } = JSON.parse(line!) as {
    response: { status: number; body: string; note: string }
  }
  expect(response.status).toBe(201)
  expect(response.note).toMatch(
    /^the answer ended early after .+: the service did not finish within 1000 ms; body not kept: the answer \(.+\) is larger than 1 MB/,
  )
  expect(response.body).toBe('')
  expect(await cli.stop('SIGTERM')).toBe(0)
  expect(cli.stdout()).toContain(`1 exchange saved to ${file}`)
}, 30_000)
