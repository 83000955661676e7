// A fixed-window rate limit per credential.
/** The outcome of counting one request against the limit. */
export interface RateLimitResult {
  allowed: boolean
  limit: number
  remaining: number
  /** Seconds until the window resets. */
  resetSeconds: number
}

/** A fixed-window rate limiter keyed by credential. */
export interface RateLimiter {
  hit(key: string, now: number): RateLimitResult
  /** How many credentials have an open window. */
  readonly size: number
}

/**
 * Creates a fixed-window limiter on the sandbox clock. Windows that have
 * ended are swept as new ones open, so memory follows the active credentials.
 *
 * @example
 * const limiter = createRateLimiter({ limit: 100, windowSeconds: 60 })
 * limiter.hit('sk_test_…', Date.now()).allowed
 */
export function createRateLimiter(options: {
  limit: number
  windowSeconds: number
}): RateLimiter {
  const windowMs = options.windowSeconds * 1000
  const windows = new Map<string, { start: number; count: number }>()
  let lastSweep = 0
  return {
    hit(key, now) {
      const start = Math.floor(now / windowMs) * windowMs
      if (start !== lastSweep) {
        for (const [k, w] of windows) if (w.start < start) windows.delete(k)
        lastSweep = start
      }
      let window = windows.get(key)
      if (!window || window.start !== start) {
        window = { start, count: 0 }
        windows.set(key, window)
      }
      window.count++
      return {
        allowed: window.count <= options.limit,
        limit: options.limit,
        remaining: Math.max(0, options.limit - window.count),
        resetSeconds: Math.max(1, Math.ceil((start + windowMs - now) / 1000)),
      }
    },
    get size() {
      return windows.size
    },
  }
}
