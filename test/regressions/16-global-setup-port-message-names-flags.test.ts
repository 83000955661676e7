import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, expect, it } from 'vitest'
import { FLAG_NAMING } from '../../src/cli/flags.ts'
import {
  createSandboxServer,
  DataFileError,
  SandboxStartError,
} from '../../src/runtimes/node.ts'
import { sandboxGlobalSetup } from '../../src/runtimes/playwright.ts'
import { runCli, tempFolder } from '../_servers.ts'

// A Playwright run whose global setup asked for a port in use failed with
// "pick another with --port (or PORT), or use --port 0": flags of a command
// line that a Playwright user never typed, whose options are
// `sandboxGlobalSetup({ port })`. createSandboxServer said the same, and its
// other start-up errors (no admin token beyond loopback, a host that is no
// address here, an unusable data file) named flags too.

let blocker: Server | undefined
afterEach(() => blocker?.close())

async function portInUse(): Promise<number> {
  blocker = createServer()
  await new Promise<void>((done) => blocker!.listen(0, '127.0.0.1', done))
  return (blocker.address() as AddressInfo).port
}

it('names the port option of sandboxGlobalSetup, its value and what to do, and no flag', async () => {
  const port = await portInUse()
  const setup = sandboxGlobalSetup({ port })()
  await expect(setup).rejects.toThrow(
    `Failed to start the sandbox server of sandboxGlobalSetup(): Port ${port} is already in use on 127.0.0.1. Stop what uses it, or change sandboxGlobalSetup({ port: ${port} }) to another port (sandboxGlobalSetup({ port: 0 }) takes a free one).`,
  )
  await expect(setup).rejects.not.toThrow(/--port|PORT/)
})

it('names the port option in createSandboxServer, and the flag on the command line', async () => {
  const port = await portInUse()
  const start = createSandboxServer({ port, playground: false })
  await expect(start).rejects.toBeInstanceOf(SandboxStartError)
  await expect(start).rejects.toThrow(
    `Port ${port} is already in use on 127.0.0.1. Stop what uses it, or change port: ${port} to another port (port: 0 takes a free one).`,
  )
  const error = (await start.catch(
    (thrown: unknown) => thrown,
  )) as SandboxStartError
  expect(error.explain(FLAG_NAMING)).toBe(
    `Port ${port} is already in use on 127.0.0.1. Stop what uses it, or change --port ${port} to another port (--port 0 takes a free one).`,
  )

  const cli = runCli(['--port', String(port), '--quiet'])
  expect(await cli.exited).toBe(1)
  expect(cli.stderr()).toBe(
    `customer-token-sandbox: Port ${port} is already in use on 127.0.0.1. Stop what uses it, or change --port ${port} to another port (--port 0 takes a free one).\n`,
  )
})

it('names adminToken and host as options, not --admin-token and --host, beyond loopback', async () => {
  const start = sandboxGlobalSetup({ host: '0.0.0.0' })()
  await expect(start).rejects.toThrow(
    "Set the adminToken option of sandboxGlobalSetup() (at least 16 characters), or listen on this machine only with sandboxGlobalSetup({ host: '127.0.0.1' }).",
  )
  await expect(start).rejects.not.toThrow(/--/)

  // 192.0.2.0/24 is TEST-NET-1: never an address of this machine.
  const elsewhere = createSandboxServer({
    port: 0,
    host: '192.0.2.1',
    adminToken: 'admin-token-of-sixteen-chars',
    playground: false,
  })
  await expect(elsewhere).rejects.toThrow(
    "Use host: '127.0.0.1' to serve this machine only, or host: '0.0.0.0' (with the adminToken option) to serve every network it is on.",
  )
})

it('names the dataFile option when the data file cannot be used', async () => {
  const folder = await tempFolder('cts-data-file-option-')
  const start = createSandboxServer({
    port: 0,
    playground: false,
    dataFile: folder,
  })
  await expect(start).rejects.toBeInstanceOf(DataFileError)
  await expect(start).rejects.toThrow(
    `The data file ${folder} is not a regular file; it was left untouched. Give the dataFile option the path of a file (it is created if missing).`,
  )
  const error = (await start.catch(
    (thrown: unknown) => thrown,
  )) as DataFileError
  expect(error.explain(FLAG_NAMING)).toContain(
    'Give --data-file the path of a file',
  )
})
