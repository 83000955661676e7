import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** The built `bin`, as consumers run it. */
export const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url))

/** A spawned CLI with its output collected. */
export interface Spawned {
  child: ChildProcess
  stdout(): string
  stderr(): string
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>
  /** Resolves with the first stdout line matching `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>
}

/** How to spawn the CLI besides its arguments. */
export interface SpawnOptions {
  /**
   * Runs it under `ulimit -f`: a write that would make a file larger than
   * this many KiB fails with EFBIG, as one fails with ENOSPC on a full disk.
   */
  fileSizeLimitKb?: number
}

/**
 * Spawns the CLI with `args`, without colour and without standard input.
 *
 * @example
 * const cli = spawnCli(['--port', '0', '--quiet'])
 * const [url] = await cli.waitFor(/http:\/\/\S+/)
 */
export function spawnCli(
  args: string[],
  env: Record<string, string> = {},
  { fileSizeLimitKb }: SpawnOptions = {},
): Spawned {
  const argv = [process.execPath, BIN, ...args]
  // @note `exec` keeps the pid: a signal sent to the child reaches the CLI.
  const [command, ...rest] =
    fileSizeLimitKb === undefined
      ? argv
      : [
          'bash',
          '-c',
          `ulimit -f ${fileSizeLimitKb} && exec "$0" "$@"`,
          ...argv,
        ]
  const child = spawn(command!, rest, {
    env: { ...process.env, NO_COLOR: '1', PORT: '', HOST: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  const waiters = new Set<() => void>()
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk
    for (const wake of waiters) wake()
  })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk
  })
  const exited = new Promise<number | string>((resolve) => {
    child.on('exit', (code, signal) => {
      resolve(code ?? signal ?? -1)
      for (const wake of waiters) wake()
    })
  })
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(pattern, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(
            new Error(
              `Timed out waiting for ${pattern} in stdout:\n${out}\nstderr:\n${err}`,
            ),
          )
        }, timeoutMs)
        function check(): void {
          const match = out.match(pattern)
          if (match) {
            clearTimeout(timer)
            waiters.delete(check)
            resolve(match)
          } else if (child.exitCode !== null || child.signalCode !== null) {
            clearTimeout(timer)
            waiters.delete(check)
            reject(
              new Error(
                `The CLI exited (${child.exitCode ?? child.signalCode}) before printing ${pattern}:\n${out}\n${err}`,
              ),
            )
          }
        }
        waiters.add(check)
        check()
      })
    },
  }
}
