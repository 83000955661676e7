// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { runCli } from '../_servers.ts'

// A --store URL whose password held a / (as generated passwords often do)
// or a % that starts no escape did not parse as a URL, and the line that
// refused it printed the password whole, or said "URI malformed" alone; one
// whose password began with digits then a / parsed as a port and a path,
// and the line named the rest of the password as the database. Each is now
// refused with the password hidden, saying how to write those characters.

/** Runs the CLI on `url` and gives its exit code and its one line of stderr. */
async function refusal(
  url: string,
): Promise<{ code: number | string; line: string }> {
  const cli = runCli(['--port', '0', '--quiet', '--store', url])
  const code = await cli.exited
  const lines = cli.stderr().trim().split('\n')
  expect(lines).toHaveLength(1)
  return { code, line: lines[0]! }
}

it('hides a password that holds a / or a bad % escape, and says how to write it', async () => {
  for (const [url, secret] of [
    ['redis://app:se/cret@127.0.0.1:6379/0', 'se/cret'],
    ['redis://app:1234/secret@127.0.0.1:6379/0', 'secret'],
    ['redis://app:sec%ZZret@127.0.0.1:6379/0', 'sec%ZZret'],
  ] as const) {
    const { code, line } = await refusal(url)
    expect(code).toBe(1)
    expect(line).not.toContain(secret)
    expect(line).toContain('redis://app:***@127.0.0.1:6379/0')
    expect(line).toContain('%2F')
  }
}, 30_000)
