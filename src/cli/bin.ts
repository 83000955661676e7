#!/usr/bin/env node
// The CLI binary: runs main(), and stops a server cleanly on SIGINT or SIGTERM.
import { main } from './cli.ts'

const started = main()
let stopping = false
// Whether main() has returned: until then a server is still starting (a long
// seed, a large data file) and nothing has been served or acknowledged.
let settled = false
void started.finally(() => {
  settled = true
})
// `verify` hears Ctrl-C itself and prints what it found so far.
const serving = !['verify', 'record'].includes(process.argv[2] ?? '')
// @note Listening before the server prints its URL: a caller may signal as
// soon as it reads it, and an unheard SIGTERM ends the process at once,
// leaving the data file's lock behind.
const stop = (signal: NodeJS.Signals): void => {
  // A second signal means "now": skip the graceful part.
  if (stopping) process.exit(130)
  stopping = true
  if (serving && !settled) {
    // @note Stop now rather than after the seed: a lock or temporary file
    // left beside the data file is taken over or removed by the next start.
    process.stderr.write(
      `customer-token-sandbox: stopped by ${signal} before the server started\n`,
    )
    process.exit(signal === 'SIGINT' ? 130 : signal === 'SIGHUP' ? 129 : 143)
  }
  started
    .then(async ({ server, recorder, exitCode }) => {
      await (server ?? recorder)?.close()
      return server || recorder ? 0 : (exitCode ?? 0)
    })
    .then(
      (code) => process.exit(code),
      (error: Error) => {
        process.stderr.write(
          `customer-token-sandbox: failed to stop cleanly after ${signal}: ${error.message}\n`,
        )
        process.exit(1)
      },
    )
}
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
// @note The terminal that started a server closed (an SSH session dropped):
// unheard, SIGHUP ends it at once, its lock left and its close skipped.
// `verify` keeps the default and ends there.
if (process.argv[2] !== 'verify') process.once('SIGHUP', stop)

try {
  const { exitCode, server, recorder } = await started
  if (!server && !recorder) process.exitCode = exitCode ?? 0
} catch (error) {
  process.stderr.write(
    `customer-token-sandbox: ${(error as Error).message}${process.env.DEBUG ? `\n${(error as Error).stack}` : ' (set DEBUG=1 for details)'}\n`,
  )
  process.exitCode = 1
}
