import { execFileSync } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it, onTestFinished } from 'vitest'
import { main } from '../../src/cli/cli.ts'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { captureOutput, tempFolder } from '../_servers.ts'

// `verify --write-config` was first tried after the whole battery, which
// creates records on the service: a folder or a missing folder then failed
// with a bare EISDIR or ENOENT and left a temporary file behind, and a
// device or a FIFO was replaced by a regular file (`/dev/null`, run as root).

/** A service that counts the requests it gets and answers none usefully. */
async function countingService() {
  let requests = 0
  const server = createServer((_req, res) => {
    requests++
    res.writeHead(500).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  onTestFinished(
    () => new Promise<void>((resolve) => server.close(() => resolve())),
  )
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
  }
}

it.each([
  ['a folder', 'folder', 'is not a regular file'],
  ['a FIFO', 'fifo', 'is not a regular file'],
  [
    'a file in a missing folder',
    join('missing', 'observed.json'),
    'does not exist',
  ],
])(
  'refuses %s before sending anything, exit 2, nothing left',
  async (_what, name, says) => {
    const folder = await tempFolder('cts-write-config-')
    execFileSync('mkdir', [join(folder, 'folder')])
    execFileSync('mkfifo', [join(folder, 'fifo')])
    const path = join(folder, name)
    const service = await countingService()
    const stderr = captureOutput()
    const { exitCode } = await main({
      args: [
        'verify',
        '--target',
        service.url,
        '--key',
        DEMO_KEY_ONE,
        '--rate',
        '1000',
        '--write-config',
        path,
      ],
      stdout: captureOutput().stream,
      stderr: stderr.stream,
      env: {},
    })
    expect(exitCode).toBe(2)
    expect(stderr.text().split('\n')[0]).toContain(`--write-config ${path}`)
    expect(stderr.text().split('\n')[0]).toContain(says)
    expect(service.requests()).toBe(0)
    expect((await readdir(folder)).toSorted()).toEqual(['fifo', 'folder'])
    expect((await stat(join(folder, 'fifo'))).isFIFO()).toBe(true)
  },
)
