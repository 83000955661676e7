// Runs once: every server here names its own store.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { startServer, tempFolder } from '../_servers.ts'

// A data file in a folder the server cannot write (EACCES, EROFS) was
// refused with "Cannot create the lock file …: EACCES: permission denied,
// open '.data.json.lock.<pid>.tmp'": a file of ours, not what to fix.

// @note sysfs refuses new files to every user, root included, where a
// folder without write permission would not stop root.
it.skipIf(!existsSync('/sys/kernel'))(
  'says that the folder of the data file must be writable, naming the folder and the option, not a temporary file',
  async () => {
    const refused = startServer({ seed: 1, dataFile: '/sys/kernel/data.json' })
    await expect(refused).rejects.toThrow(
      /^The data file \/sys\/kernel\/data\.json cannot be used: its folder \/sys\/kernel is not writable by this user \(EACCES\)\..*must exist and be writable: make it writable, or give the dataFile option a path in a folder that is\.$/,
    )
    await expect(refused).rejects.not.toThrow(/\.tmp/)
  },
)

it('says that the folder of the data file does not exist', async () => {
  const file = join(await tempFolder('cts-folder-'), 'missing', 'data.json')
  await expect(startServer({ seed: 1, dataFile: file })).rejects.toThrow(
    /its folder .*missing does not exist \(ENOENT\)\..*create it, or give the dataFile option/,
  )
})
