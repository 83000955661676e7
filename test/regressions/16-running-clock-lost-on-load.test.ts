// Runs once: every server here names its own store.
import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { startServer, tempDataFile } from '../_servers.ts'

const DAY = 24 * 3600 * 1000

// With clockAfterSet 'running', a sandbox clock advanced by a day was saved
// as `{ now, frozen: false }` and loaded as a clock following the host: the
// day was gone after a restart or a snapshot's restore.
it('keeps a running sandbox clock that was moved across a restart with the data file', async () => {
  const dataFile = await tempDataFile('cts-running-')
  const first = await startServer({ clockAfterSet: 'running', dataFile })
  const moved = await fetch(`${first.url}/__sandbox/clock`, {
    method: 'POST',
    body: JSON.stringify({ advance_seconds: 24 * 3600 }),
  })
  expect(moved.status).toBe(200)
  await first.close()

  const second = await startServer({ clockAfterSet: 'running', dataFile })
  const { now } = (await (
    await fetch(`${second.url}/__sandbox/clock`)
  ).json()) as { now: string }
  // Running on from where it was: about a day ahead of the host.
  expect(Date.parse(now) - Date.now()).toBeGreaterThan(DAY - 3600 * 1000)
})

it('keeps a running sandbox clock that was moved across a snapshot and its restore', async () => {
  const sandbox = createSandbox({ clockAfterSet: 'running' })
  await sandbox.ready
  await sandbox.snapshot('before')
  sandbox.clock.advance(DAY)
  await sandbox.snapshot('ahead')
  await sandbox.restore('before')
  expect(sandbox.clock.now().getTime() - Date.now()).toBeLessThan(3600 * 1000)
  await sandbox.restore('ahead')
  expect(sandbox.clock.now().getTime() - Date.now()).toBeGreaterThan(
    DAY - 3600 * 1000,
  )
})

it('still follows the host after a load when the running clock was never moved', async () => {
  const sandbox = createSandbox({ clockAfterSet: 'running' })
  await sandbox.ready
  const data = sandbox.dump()
  await sandbox.load({
    ...data,
    clock: { ...data.clock, now: '2000-01-01T00:00:00.000Z' },
  })
  expect(Math.abs(sandbox.clock.now().getTime() - Date.now())).toBeLessThan(
    3600 * 1000,
  )
})
