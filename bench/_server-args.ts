// How the benches start the built CLI: one place, so that the figures of
// bench/run.ts and bench/allocations.ts are of the same server.

/**
 * The limits the benches run under: they create at full speed into one
 * account, far past the default limits (10,000 customers or tokens per
 * account).
 *
 * @example
 * const sandbox = createSandbox({ limits: BENCH_LIMITS })
 */
export const BENCH_LIMITS = {
  customersPerAccount: 100_000_000,
  tokensPerAccount: 100_000_000,
  records: 100_000_000,
}

const LIMITS_FLAG = Object.entries(BENCH_LIMITS)
  .map(([key, value]) => `${key}=${value}`)
  .join(',')

/**
 * The arguments for `node` that start the built CLI (`npm run build` first)
 * on a free port, quiet, under {@link BENCH_LIMITS}, with `extra` after them
 * (a store, a data file, seeded customers).
 *
 * @example
 * spawn(process.execPath, serverArgs('--store', redis.url))
 */
export function serverArgs(...extra: string[]): string[] {
  return [
    'dist/bin.js',
    '--port',
    '0',
    '--quiet',
    '--limits',
    LIMITS_FLAG,
    ...extra,
  ]
}
