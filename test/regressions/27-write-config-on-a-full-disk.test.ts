import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { runCli, startServer, tempFolder } from '../_servers.ts'

// --write-config on a full disk kept the earlier config (the write goes to a
// temporary file first) but said only "ENOSPC: no space left on device,
// write": neither which file nor that the one there was left as it was.

it('names the file it could not write and says the one there is unchanged', async () => {
  const service = await startServer({ customersPerAccount: 0 })
  const folder = await tempFolder('cts-config-full-')
  const config = join(folder, 'observed.json')
  await writeFile(config, '{ "uniqueEmail": true }\n')
  // @note Under `ulimit -f 0` every write fails with EFBIG, as on a full disk.
  const cli = runCli(
    [
      'verify',
      '--target',
      service.url,
      '--key',
      DEMO_KEY_ONE,
      '--rate',
      '1000',
      '--write-config',
      config,
    ],
    { fileSizeLimitKb: 0 },
  )
  expect(await cli.exited).toBe(1)
  expect(cli.stderr()).toContain(
    `cannot write --write-config ${config} (the file is larger than this file system allows (EFBIG)); the file there is unchanged`,
  )
  expect(await readFile(config, 'utf8')).toBe('{ "uniqueEmail": true }\n')
  expect(await readdir(folder)).toEqual(['observed.json'])
})
