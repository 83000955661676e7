/** A running round-robin proxy. */
export interface RoundRobinProxy {
  /** `http://127.0.0.1:<port>`. */
  url: string
  /** Stops listening and drops its connections (calling it twice is harmless). */
  close(): Promise<void>
}

/** Where the proxy listens. */
export interface RoundRobinProxyOptions {
  /** @default 0 (a free port) */
  port?: number
  /** @default '127.0.0.1' */
  host?: string
}

/**
 * Starts a reverse proxy that sends each request to the next of `targets` in
 * turn, answering 502 with a short JSON body when that one is down.
 */
export declare function createRoundRobinProxy(
  targets: readonly string[],
  options?: RoundRobinProxyOptions,
): Promise<RoundRobinProxy>
