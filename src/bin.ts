#!/usr/bin/env node
import { main } from './cli.ts'

try {
  const { exitCode, server } = await main()
  if (server) {
    let stopping = false
    const stop = (signal: NodeJS.Signals): void => {
      // A second signal means "now": skip the graceful part.
      if (stopping) process.exit(130)
      stopping = true
      server.close().then(
        () => process.exit(0),
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
  } else {
    process.exitCode = exitCode ?? 0
  }
} catch (error) {
  process.stderr.write(
    `customer-token-sandbox: ${(error as Error).message}${process.env.DEBUG ? `\n${(error as Error).stack}` : ' (set DEBUG=1 for details)'}\n`,
  )
  process.exitCode = 1
}
