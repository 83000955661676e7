// What the CLI's commands share: where they write, and what they leave running.
import type { SandboxServer } from '../runtimes/node.ts'

/** Where the CLI writes; tests pass their own. */
export interface CliIO {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number }
  stderr: NodeJS.WritableStream
  env: Record<string, string | undefined>
}

/** What `main()` leaves running, if anything. */
export interface MainResult {
  /** Set when the CLI is done: the process should exit with it. */
  exitCode?: number
  /** Set when a server is running. */
  server?: SandboxServer
  /** Set when `record` is running: close it to stop. */
  recorder?: { url: string; close(): Promise<void> }
}
