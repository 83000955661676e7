#!/usr/bin/env node
import { main } from './cli.ts'

const started = main()
let stopping = false
// @note Listening before the server prints its URL: a caller may signal as
// soon as it reads it, and an unheard SIGTERM ends the process at once,
// leaving the data file's lock behind.
const stop = (signal: NodeJS.Signals): void => {
  // A second signal means "now": skip the graceful part.
  if (stopping) process.exit(130)
  stopping = true
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

try {
  const { exitCode, server, recorder } = await started
  if (!server && !recorder) process.exitCode = exitCode ?? 0
} catch (error) {
  process.stderr.write(
    `customer-token-sandbox: ${(error as Error).message}${process.env.DEBUG ? `\n${(error as Error).stack}` : ' (set DEBUG=1 for details)'}\n`,
  )
  process.exitCode = 1
}
