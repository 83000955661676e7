// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { startCli, tempDataFile } from '../_servers.ts'

// With the data file on a full disk, a clock move, a queued scenario and a
// new API key answered 503 "…so nothing was changed. Retry…", yet the clock
// had moved, the scenario was queued and the account existed, and the next
// write that fitted stored them: a client that trusted the answer and
// retried moved the clock twice and queued two faults. A change through
// /__sandbox/ that the file cannot store is now taken back, so the answer
// is true; a reset, which is not taken back, says what became of it.

// Under `ulimit -f` every write past the size fails with EFBIG, as ENOSPC
// does on a full disk (see 14-disk-full-with-data-file).
const LIMIT_KB = 48

const json = { 'content-type': 'application/json' }

/** A server on a data file it cannot write: it starts degraded, on the data it read. */
async function startOnFullDisk(customers: string, limitKb: number) {
  const file = await tempDataFile('cts-full-admin-')
  const args = ['--port', '0', '--quiet', '--data-file', file]
  const roomy = await startCli([...args, '--customers', customers])
  expect(await roomy.stop()).toBe(0)
  const full = await startCli(args, { fileSizeLimitKb: limitKb })
  expect((await fetch(`${full.url}/__sandbox/health`)).status).toBe(503)
  return full
}

const problemOf = async (response: Response) => {
  expect(response.status).toBe(503)
  expect(response.headers.get('retry-after')).toBe('5')
  return (await response.json()) as { code: string; detail: string }
}

/** The accounts with their keys, as `GET /__sandbox/state` shows them. */
const accountsOf = async (url: string) =>
  (
    (await (await fetch(`${url}/__sandbox/state`)).json()) as {
      accounts: unknown[]
    }
  ).accounts

it(
  'takes back a clock move, a queued scenario and a new key it could not store, as its 503 says',
  { timeout: 30_000 },
  async () => {
    const server = await startOnFullDisk('200', LIMIT_KB)
    const { url } = server
    const accountsBefore = await accountsOf(url)

    const moved = await problemOf(
      await fetch(`${url}/__sandbox/clock`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ advance_seconds: 86_400 }),
      }),
    )
    expect(moved.code).toBe('storage_unavailable')
    expect(moved.detail).toMatch(/\(EFBIG\), so nothing was changed/)
    // The clock follows the host's time still, not a day ahead of it.
    const clock = (await (await fetch(`${url}/__sandbox/clock`)).json()) as {
      now: string
      frozen: boolean
    }
    expect(clock.frozen).toBe(false)
    expect(Date.parse(clock.now) - Date.now()).toBeLessThan(60_000)

    // Sent twice, as a client that trusts the answer retries it.
    for (let attempt = 0; attempt < 2; attempt++) {
      const queued = await problemOf(
        await fetch(`${url}/__sandbox/scenarios`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ operation: 'createCustomer', status: 503 }),
        }),
      )
      expect(queued.detail).toMatch(/nothing was changed/)
    }
    expect(await (await fetch(`${url}/__sandbox/scenarios`)).json()).toEqual({
      scenarios: [],
    })

    const minted = await problemOf(
      await fetch(`${url}/__sandbox/api-keys`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ account_name: 'Never stored' }),
      }),
    )
    expect(minted.detail).toMatch(/nothing was changed/)
    expect(await accountsOf(url)).toEqual(accountsBefore)
    expect(await server.stop()).toBe(0)
  },
)

it(
  'says that a reset it could not store is made in memory only, and not to send it again',
  { timeout: 30_000 },
  async () => {
    // Not even the seeded state of a reset fits.
    const server = await startOnFullDisk('5', 1)
    const reset = await problemOf(
      await fetch(`${server.url}/__sandbox/reset`, { method: 'POST' }),
    )
    expect(reset.code).toBe('storage_unavailable')
    expect(reset.detail).toMatch(
      /could not store this change in its data file \(EFBIG\): it is made in memory but not stored\. The data file stores it with the next write that succeeds, and it is lost if the server stops before then; do not send it again\./,
    )
    expect(reset.detail).not.toMatch(/nothing was changed/)
    expect(await server.stop()).toBe(0)
  },
)
