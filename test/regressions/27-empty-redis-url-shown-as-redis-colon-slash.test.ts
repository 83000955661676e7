// Runs once: every server here names its own store.
import { connect } from 'node:net'
import { expect, it } from 'vitest'
import { redactUrl } from '../../src/_utils.ts'
import { runCli } from '../_servers.ts'

// A URL as messages show it dropped its last `/` whatever it was: with no
// host, that was the second `/` of the scheme's `//`, so `--store redis://`
// (Redis's defaults, 127.0.0.1:6379) was refused naming `redis:/`, a URL no
// one gave. Only a path's trailing `/` after a host is dropped now.

it('shows a URL without a host as given, and still drops a trailing / after a host', () => {
  expect(redactUrl('redis://')).toBe('redis://')
  expect(redactUrl('rediss://')).toBe('rediss://')
  expect(redactUrl('redis://h:1/')).toBe('redis://h:1')
  expect(redactUrl('redis://127.0.0.1:6379/0')).toBe('redis://127.0.0.1:6379/0')
  expect(redactUrl('redis://app:secret@redis.internal:6379/0')).toBe(
    'redis://app:***@redis.internal:6379/0',
  )
  // A password holding / : or @ stays hidden.
  expect(redactUrl('redis://app:se/cr:et@x@127.0.0.1:6379/')).toBe(
    'redis://app:***@127.0.0.1:6379',
  )
  expect(redactUrl('redis://:secret@127.0.0.1:port/0')).toBe(
    'redis://:***@127.0.0.1:port/0',
  )
})

/** Whether something accepts connections at 127.0.0.1:6379. */
const defaultPortTaken = (): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(6379, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })

it('names the store as redis:// when it cannot reach --store redis://, exit 1', async () => {
  // The URL means Redis's default place: with nothing there, it is refused.
  expect(await defaultPortTaken()).toBe(false)
  const cli = runCli(['--port', '0', '--quiet', '--store', 'redis://'])
  expect(await cli.exited).toBe(1)
  const lines = cli.stderr().trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toContain('Cannot reach the Redis store at redis://: ')
  expect(lines[0]).not.toContain('redis:/:')
}, 30_000)
