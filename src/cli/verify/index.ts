// verify: probes a live service and grades each assumption of the ledger against it.
import { DEMO_KEY_ONE } from '../../../fixtures/demo-keys.ts'
import { LEDGER } from '../../assumptions.ts'
import { resolveOptions } from '../../options.ts'
import { createSandboxCore } from '../../sandbox-core.ts'
import { problemJson, SandboxError } from '../../request/errors.ts'
import { sandboxOptionsOf } from './config.ts'
import {
  NOT_PROBED,
  PROBES,
  SAME_AS,
  type Expectations,
  type ProbeContext,
  type RowResult,
} from './probes.ts'
import {
  createProber,
  DEFAULT_MAX_CREATES,
  ProbeStopped,
  type ProbeRequest,
  type PlannedRequest,
  type ProberOptions,
} from './transport.ts'

/** Options of `runVerify()`. */
export interface VerifyOptions extends Omit<ProberOptions, 'onRequest'> {
  /**
   * The sandbox options to hold the service against (what `--config` holds);
   * unset, the defaults.
   */
  config?: Record<string, unknown>
  /** Answers every probe from a sandbox with `config` instead of the service, to list the requests. */
  dryRun?: boolean
  /** Called after each request with the count so far and the most the run may send. */
  onProgress?: (sent: number, max: number, purpose: string) => void
}

/** What `runVerify()` found. */
export interface VerifyReport {
  target: string
  /** Every ledger row, in the ledger's order. */
  rows: RowResult[]
  summary: { matches: number; differs: number; unknown: number }
  /** Rows that a probe group checks, and the rows with an observable effect. */
  coverage: { probed: number; observable: number }
  requests: number
  creates: number
  /** The host every request went to, and so every record was created on. */
  host: string
  /**
   * Set when `--max-creates` or `--max-requests` ran out before every row was
   * probed: the flags and values that would probe the rest.
   */
  budget?: { flag: '--max-creates' | '--max-requests'; suggested: number }[]
  /** Set for `verify --from`: how many recorded exchanges were replayed, offline. */
  offline?: { exchanges: number }
  /** The tag in the name (or email) of every record the run created. */
  tag: string
  /** Set when Ctrl-C (or the signal) stopped the run: the report is partial. */
  stopped?: string
  /** Set when the service failed probes: timed out, reset, 5xx or not JSON. */
  failed?: string
  /**
   * Set when no row could be graded `matches` or `differs`: why the first
   * probe that tried got no answer to judge. Such a run passes nothing.
   */
  nothingCompared?: string
  /** The options that make the sandbox behave as observed (`--write-config`). */
  config: Record<string, unknown>
  /** Every request sent, secrets masked (what `--dry-run` lists). */
  log: PlannedRequest[]
}

/** Groups failing in a row before the rest are given up: a dead target is not hammered. */
const FAILURES_BEFORE_GIVING_UP = 3

/**
 * What a sandbox configured with `config` does, for each option a probe checks.
 *
 * @example
 * toExpectations({ uniqueEmail: true }).uniqueEmail // true
 */
export function toExpectations(config: Record<string, unknown>): Expectations {
  const o = resolveOptions(sandboxOptionsOf(config))
  return {
    requiredFields: o.requiredFields,
    nameLength: o.nameLength,
    emailMaxLength: o.emailMaxLength,
    uniqueEmail: o.uniqueEmail,
    unknownFields: o.unknownFields,
    scopes: o.scopes,
    expiresIn: o.expiresIn,
    v1AcceptsTokens: o.v1AcceptsTokens,
    tokenIssuers: o.tokenIssuers,
    rateLimit: o.rateLimit,
    maxBodyBytes: o.maxBodyBytes,
    errorFormat:
      o.errorFormat.name === 'problemJson' ? 'problemJson' : 'custom',
    keepAliveTimeout:
      typeof config.keepAliveTimeout === 'number'
        ? config.keepAliveTimeout
        : 5000,
    maxHeadersCount:
      typeof config.maxHeadersCount === 'number' ? config.maxHeadersCount : 100,
  }
}

/**
 * Answers probes from an in-process sandbox configured with `config`, as the
 * service would if it behaved as expected, including the standalone server's
 * header-count limit, which no in-process request meets otherwise.
 */
async function sandboxSend(
  config: Record<string, unknown>,
  expect: Expectations,
  key: string,
): Promise<(request: Request, probe: ProbeRequest) => Promise<Response>> {
  const { sandbox } = createSandboxCore({
    ...sandboxOptionsOf(config),
    customersPerAccount: 0,
  })
  await sandbox.ready
  return async (request, probe) => {
    if (
      probe.headerCount !== undefined &&
      probe.headerCount > expect.maxHeadersCount
    )
      return new SandboxError(
        'headers_too_large',
        `The request has more than ${expect.maxHeadersCount} header fields.`,
      ).toResponse('req_dry_run', problemJson)
    const headers = new Headers(request.headers)
    const auth = headers.get('authorization')
    if (auth) headers.set('authorization', auth.replace(key, DEMO_KEY_ONE))
    return sandbox.fetch(
      new Request(
        new URL(new URL(request.url).pathname, 'http://sandbox.test'),
        { method: 'POST', headers, body: await request.text() },
      ),
    )
  }
}

/**
 * Holds the sandbox's assumptions against a live implementation of the two
 * operations: one probe group per ledger row with an observable effect, within
 * a request budget, and returns each row's verdict and the options that make
 * the sandbox behave as observed.
 *
 * @example
 * const report = await runVerify({ target: 'https://staging.acme.test', key: process.env.KEY! })
 * report.rows.filter((row) => row.verdict === 'differs')
 */
export async function runVerify(options: VerifyOptions): Promise<VerifyReport> {
  const config = options.config ?? {}
  const expect = toExpectations(config)
  const maxRequests = options.maxRequests ?? 200
  let send = options.send
  const key = options.key
  if (options.dryRun) send = await sandboxSend(config, expect, key)
  const prober = createProber({
    ...options,
    key,
    ...(send && { send }),
    onRequest: (sent, request) =>
      options.onProgress?.(sent, maxRequests, request.purpose),
  })
  const ctx: ProbeContext = {
    prober,
    key,
    expect,
    answers: [],
    found: {},
    counter: 0,
  }
  const results = new Map<string, RowResult>()
  let stopped: string | undefined
  let failed: string | undefined
  let firstCause: string | undefined
  let failuresInRow = 0
  for (const group of PROBES) {
    const expected =
      LEDGER.find((row) => row.id === group.id)?.default ?? group.id
    if (stopped) {
      results.set(group.id, {
        id: group.id,
        verdict: 'unknown',
        expected,
        observed: stopped,
      })
      continue
    }
    if (failuresInRow >= FAILURES_BEFORE_GIVING_UP && !group.passive) {
      results.set(group.id, {
        id: group.id,
        verdict: 'unknown',
        expected,
        observed: `not probed: the service failed ${FAILURES_BEFORE_GIVING_UP} probe groups in a row (${failed})`,
      })
      continue
    }
    try {
      results.set(group.id, { id: group.id, ...(await group.run(ctx)) })
      failuresInRow = 0
    } catch (error) {
      let observed: string
      if (error instanceof ProbeStopped) {
        observed = error.message
        if (error.kind === 'aborted') stopped = 'stopped (interrupted)'
        if (error.kind === 'network') {
          failed = error.message
          failuresInRow++
        }
      } else {
        // A bug in a probe is reported on its row, never as a stack trace.
        observed = `internal error in this probe: ${(error as Error).message}`
      }
      firstCause ??= observed
      results.set(group.id, {
        id: group.id,
        verdict: 'unknown',
        expected,
        observed,
      })
    }
  }

  const rows: RowResult[] = LEDGER.map((item) => {
    const probed = results.get(item.id)
    if (probed) return { ...probed, observed: prober.redact(probed.observed) }
    const same = SAME_AS[item.id]
    if (same && results.has(same)) {
      const other = results.get(same)!
      return {
        id: item.id,
        verdict: other.verdict,
        expected: other.expected,
        observed: `as ${same}: ${prober.redact(other.observed)}`,
      }
    }
    return {
      id: item.id,
      verdict: 'unknown',
      expected: item.default,
      observed:
        NOT_PROBED[item.id] ?? 'not probed: verify has no probe for this row',
    }
  })
  const written: Record<string, unknown> = { ...config }
  for (const row of rows)
    if (row.verdict !== 'unknown' && row.config)
      Object.assign(written, row.config)
  const budget: NonNullable<VerifyReport['budget']> = []
  const ranOut = (flag: string) =>
    [...results.values()].some((row) =>
      row.observed.startsWith(`not probed: ${flag} `),
    )
  if (
    !options.dryRun &&
    (ranOut('--max-creates') || ranOut('--max-requests'))
  ) {
    // @note What the battery needs against a sandbox configured as observed
    // so far, with room for bounds not yet seen: a rerun with it probes the rest.
    const needed = await runVerify({
      target: options.target,
      key,
      config: written,
      dryRun: true,
      rate: 1_000_000,
      maxRequests: 100_000,
      maxCreates: 100_000,
    })
    const roomy = (n: number, least: number) =>
      Math.max(least, Math.ceil((n * 1.5) / 10) * 10)
    if (ranOut('--max-creates'))
      budget.push({
        flag: '--max-creates',
        suggested: roomy(
          needed.creates,
          (options.maxCreates ?? DEFAULT_MAX_CREATES) * 2,
        ),
      })
    if (ranOut('--max-requests'))
      budget.push({
        flag: '--max-requests',
        suggested: roomy(needed.requests, maxRequests * 2),
      })
  }
  const count = (verdict: string) =>
    rows.filter((row) => row.verdict === verdict).length
  // @note A run that graded no row passes nothing, whatever stopped it: the
  // budget, redirects, a dead service. Its first cause is what to fix.
  const nothingCompared =
    !options.dryRun && !stopped && count('matches') + count('differs') === 0
      ? prober.redact(
          (firstCause ?? 'no probe group got an answer it could judge')
            .replace(/^not probed: /, '')
            .replace(/\.$/, ''),
        )
      : undefined
  const notObservable = Object.entries(NOT_PROBED).filter(([, why]) =>
    /^(no observable effect|not applicable)/.test(why),
  ).length
  return {
    target: options.dryRun ? `${options.target} (dry run)` : options.target,
    rows,
    summary: {
      matches: count('matches'),
      differs: count('differs'),
      unknown: count('unknown'),
    },
    coverage: {
      probed: PROBES.length + Object.keys(SAME_AS).length,
      observable: LEDGER.length - notObservable,
    },
    requests: prober.requests,
    creates: prober.creates,
    host: prober.host,
    ...(budget.length > 0 && { budget }),
    tag: prober.tag,
    ...(stopped && { stopped }),
    ...(failed && { failed }),
    ...(nothingCompared && { nothingCompared }),
    config: written,
    log: prober.log,
  }
}

export type { RowResult, Verdict, Expectations } from './probes.ts'
