import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, inject, onTestFinished } from 'vitest'
import { RUNS_ONCE } from './_runs-once.ts'

/** The built `bin`, as consumers run it. */
export const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url))

/** A spawned CLI with its output collected. */
export interface Spawned {
  child: ChildProcess
  /** The flags {@link storeFlagsUnderTest} put before the test's arguments. */
  storeFlags: string[]
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
  /**
   * Runs it in a PID namespace of its own, as in a container of its own
   * (`unshare --pid`, root only), where it is pid 1. The spawned process is
   * `unshare`: SIGKILL it, and the CLI gets SIGTERM.
   */
  ownPidNamespace?: boolean
}

/** A flag by which a command line names its own store. */
const NAMES_A_STORE = /^--(?:data-file|store|config)(?:=|$)/

/** A flag with which the CLI answers and exits, serving nothing. */
const SERVES_NOTHING = /^(?:-h|-v|--help|--version)$/

/**
 * The flags that put a spawned CLI's server on the store `SANDBOX_TEST_STORE`
 * names (a fresh `--data-file`, or a `--config` holding the suite's Redis
 * under a fresh namespace), so that the CLI's tests run on every store like
 * those of `startServer` (see `storeUnderTest` in test/_servers.ts); none when
 * the command runs no server (`verify`, `record`, `--help`, `--version`) or
 * names its store itself with `--data-file`, `--store` or `--config` (a config
 * file may name one, and the CLI takes a Redis namespace only from a config
 * file) or with `SANDBOX_DATA_FILE` or `SANDBOX_STORE` in its environment.
 *
 * @example
 * storeFlagsUnderTest(['--port', '0']) // ['--data-file', '/tmp/cts-cli-store-…/data.json'] on the file store
 * storeFlagsUnderTest(['--port', '0', '--data-file', file]) // []
 */
export function storeFlagsUnderTest(
  args: readonly string[],
  env: Record<string, string> = {},
): string[] {
  const kind = process.env.SANDBOX_TEST_STORE
  if (kind !== undefined && !['memory', 'file', 'redis'].includes(kind))
    throw new Error(
      `SANDBOX_TEST_STORE is memory, file or redis, not "${kind}".`,
    )
  if (args[0] === 'verify' || args[0] === 'record') return []
  if (args.some((arg) => NAMES_A_STORE.test(arg) || SERVES_NOTHING.test(arg)))
    return []
  const named = { ...process.env, ...env }
  if (named.SANDBOX_DATA_FILE || named.SANDBOX_STORE) return []
  checkRunsOnStoreUnderTest()
  if (kind === undefined || kind === 'memory') return []
  // @note Made at once, so that the clean-up is registered before any await:
  // in a concurrent suite, the current test is known only until then.
  const folder = mkdtempSync(join(tmpdir(), 'cts-cli-store-'))
  onTestFinished(() => rm(folder, { recursive: true, force: true }))
  if (kind === 'file') return ['--data-file', join(folder, 'data.json')]
  const config = join(folder, 'store.json')
  const store = { url: inject('sharedRedisUrl'), namespace: randomUUID() }
  writeFileSync(config, JSON.stringify({ store }))
  return ['--config', config]
}

/**
 * Spawns the CLI with `args`, without colour and without standard input,
 * on the store under test (see {@link storeFlagsUnderTest}).
 *
 * @example
 * const cli = spawnCli(['--port', '0', '--quiet'])
 * const [url] = await cli.waitFor(/http:\/\/\S+/)
 */
export function spawnCli(
  args: string[],
  env: Record<string, string> = {},
  { fileSizeLimitKb, ownPidNamespace }: SpawnOptions = {},
): Spawned {
  // @note Before the test's flags: one of them given without its value, at
  // the end, still lacks it rather than taking the next flag as its value.
  const storeFlags = storeFlagsUnderTest(args, env)
  const argv = [
    ...(ownPidNamespace
      ? ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child=SIGTERM']
      : []),
    process.execPath,
    BIN,
    ...storeFlags,
    ...args,
  ]
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
    storeFlags,
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

const claims = new Map<string, boolean>()

/**
 * Throws when the current test's file says that every server in it names
 * its own store (`RUNS_ONCE`): called by a helper about to put a server on
 * the store under test, so that the claim, which runs the file once, is
 * never wrong.
 *
 * @example
 * if (options.store === undefined) checkRunsOnStoreUnderTest()
 */
export function checkRunsOnStoreUnderTest(): void {
  const path = expect.getState().testPath
  if (path === undefined) return
  let says = claims.get(path)
  if (says === undefined) {
    says = readFileSync(path, 'utf8').includes(RUNS_ONCE)
    claims.set(path, says)
  }
  if (says)
    throw new Error(
      `${path} says that every server in it names its own store, and runs once; this one names none. Name its store, or remove the line so that the file runs on every store.`,
    )
}
