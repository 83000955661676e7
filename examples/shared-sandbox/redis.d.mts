// The types of redis.mjs, for the tests and the bench that import it.
import type { ChildProcess } from 'node:child_process'

/** A Redis that did not start. */
export declare class RedisStartError extends Error {
  /** The tail of what it printed (its log and its errors). */
  readonly output: string
  constructor(message: string, output: string)
}

/** How to start a Redis. */
export interface RedisServerOptions {
  /** @default 'redis-server' (found on the PATH) */
  binary?: string
  /** Its working folder, where it keeps the append-only file. */
  dir: string
  /** @default a free port */
  port?: number
  /**
   * When Redis fsyncs its append-only file: `always` before it answers a
   * write, `everysec` once a second.
   *
   * @default 'everysec'
   */
  appendfsync?: 'always' | 'everysec'
  /**
   * Turns the command and its arguments into what is spawned, as
   * `taskset -c 0 redis-server …` to pin it to a core.
   *
   * @default the command unchanged
   */
  wrap?: (command: string, args: string[]) => [string, string[]]
}

/** A Redis that answers PING. */
export interface RedisServer {
  /** `redis://127.0.0.1:<port>/0`. */
  url: string
  port: number
  dir: string
  child: ChildProcess
  /** Resolves once the process has exited. */
  exited: Promise<void>
  /** Sends `signal` (SIGTERM unless told) and resolves once it has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>
}

/**
 * Starts `redis-server` on 127.0.0.1 in `dir`, with the append-only file on
 * and no RDB snapshots, and resolves once it answers PING.
 */
export declare function startRedisServer(
  options: RedisServerOptions,
): Promise<RedisServer>

/** A port that was free a moment ago on 127.0.0.1 (Redis takes no port 0). */
export function freePort(): Promise<number>
