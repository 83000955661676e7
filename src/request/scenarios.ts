// Scenarios: queued faults and delays, the X-Sandbox-Scenario header and the latency.
import { MAX_DELAY_MS } from '../defaults.ts'
import type { Operation } from './journal.ts'
import { OPERATION_NAMES } from '../model/operations.ts'
import { limitHint, LimitReachedError } from './limits.ts'

/** What a scenario does to a call: fail with a status, wait, or drop the connection. */
export interface ScenarioEffect {
  /** Answer with this status (`simulated_failure`) instead of running the operation. */
  status?: number
  /** Wait this long, in milliseconds, before answering. */
  delayMs?: number
  /** Fail like a network error: `fetch` rejects, the server drops the connection. */
  networkError?: boolean
}

/** A queued scenario: the next `times` matching calls get its effect. */
export interface Scenario extends ScenarioEffect {
  id: string
  operation: Operation | '*'
  /** Calls it still applies to. */
  remaining: number
}

/** What a take took, to give it back: the scenario as it was, and where. */
export interface TakeReceipt {
  scenario?: Scenario
  index?: number
}

/** Options of `sandbox.scenarios.next()`. */
export interface ScenarioOptions extends ScenarioEffect {
  /** How many calls it applies to. @default 1 */
  times?: number
}

/** The scenario queue of one sandbox. */
export interface Scenarios {
  /**
   * Makes the next `times` calls of `operation` fail or wait as asked.
   * Throws a `RangeError` for a bad effect, or when `limits.scenarios` are
   * already queued.
   *
   * @example
   * sandbox.scenarios.next('createCustomer', { status: 503, times: 2 })
   */
  next(operation: Operation | '*', options: ScenarioOptions): Scenario
  /** The queued scenarios, oldest first. */
  list(): Scenario[]
  /** Empties the queue and puts the global latency back to the `latency` option. */
  clear(): void
  /**
   * Reads the global latency of every API call, or sets it (`false` for none).
   *
   * @example
   * sandbox.scenarios.latency({ min: 50, max: 250 })
   */
  latency(range?: LatencyRange | false): LatencyRange | false
}

/** A latency range in milliseconds, drawn uniformly per call. */
export interface LatencyRange {
  min: number
  max: number
}

/**
 * Creates a scenario queue. Validation happens here so that the JavaScript
 * API and `POST /__sandbox/scenarios` refuse the same things.
 *
 * @example
 * const scenarios = createScenarios()
 */
export function createScenarios(
  initialLatency: LatencyRange | false = false,
  maxQueued: number = Number.POSITIVE_INFINITY,
): Scenarios & {
  /** Takes the next effect for `operation`; `receipt` learns what was taken. */
  take(operation: Operation, receipt?: TakeReceipt): ScenarioEffect | undefined
  /** Gives back one take that `receipt` describes (a take a fleet did not store). */
  untake(receipt: TakeReceipt): void
  /** Whether a take of `operation` would take anything, without taking it. */
  holds(operation: Operation): boolean
  /** Puts back a queue that `list()` gave (a restart's): ids go on after its last. */
  restore(queue: readonly Scenario[]): void
} {
  let queue: Scenario[] = []
  let counter = 0
  let latency = initialLatency
  return {
    latency(range) {
      if (range !== undefined) {
        if (
          range !== false &&
          (!Number.isInteger(range.min) ||
            !Number.isInteger(range.max) ||
            range.min < 0 ||
            range.max > MAX_DELAY_MS ||
            range.min > range.max)
        ) {
          throw new RangeError(
            `Failed to set the latency: min and max must be whole milliseconds with 0 <= min <= max <= ${MAX_DELAY_MS} (got ${JSON.stringify(range)}).`,
          )
        }
        latency = range === false ? false : { min: range.min, max: range.max }
      }
      return latency
    },
    next(operation, options = {}) {
      if (operation !== '*' && !OPERATION_NAMES.includes(operation)) {
        throw new RangeError(
          `Failed to queue a scenario: ${JSON.stringify(String(operation).slice(0, 100))} is not an operation; use ${OPERATION_NAMES.join(', ')} or "*".`,
        )
      }
      checkEffect(options ?? {}, OPTION_TERMS)
      const times = options.times ?? 1
      if (!Number.isInteger(times) || times < 1) {
        throw new RangeError(
          `Failed to queue a scenario: "times" must be a whole number of at least 1 (got ${String(times)}).`,
        )
      }
      if (queue.length >= maxQueued) {
        throw new LimitReachedError(
          'limits.scenarios',
          `Failed to queue a scenario: ${queue.length} are queued, the most that limits.scenarios (${maxQueued}) allows. ${limitHint('limits.scenarios', 'Clear them (DELETE /__sandbox/scenarios or sandbox.scenarios.clear()) or let them run')}`,
        )
      }
      const scenario: Scenario = {
        id: `scn_${++counter}`,
        operation,
        remaining: times,
        ...pickEffect(options),
      }
      queue.push(scenario)
      return { ...scenario }
    },
    list: () => queue.map((s) => ({ ...s })),
    clear() {
      queue = []
      latency = initialLatency
    },
    restore(saved) {
      queue = saved.map((scenario) => ({ ...scenario }))
      for (const { id } of queue) {
        const number = Number(/^scn_(\d+)$/.exec(id)?.[1] ?? 0)
        if (number > counter) counter = number
      }
    },
    holds: (operation) =>
      queue.some((s) => s.operation === '*' || s.operation === operation),
    take(operation, receipt) {
      const index = queue.findIndex(
        (s) => s.operation === '*' || s.operation === operation,
      )
      if (index === -1) return undefined
      const scenario = queue[index]!
      if (receipt) {
        receipt.scenario = { ...scenario }
        receipt.index = index
      }
      if (--scenario.remaining === 0) queue.splice(index, 1)
      return pickEffect(scenario)
    },
    untake({ scenario, index }) {
      if (!scenario) return
      const held = queue.find((s) => s.id === scenario.id)
      if (held) held.remaining++
      else
        queue.splice(Math.min(index ?? 0, queue.length), 0, {
          ...scenario,
          remaining: 1,
        })
    },
  }
}

function pickEffect(source: ScenarioEffect): ScenarioEffect {
  const effect: ScenarioEffect = {}
  if (source.status !== undefined) effect.status = source.status
  if (source.delayMs !== undefined) effect.delayMs = source.delayMs
  if (source.networkError) effect.networkError = true
  return effect
}

/** How a surface names an effect's parts, and how it refuses one. */
interface EffectTerms {
  status: string
  delayMs: string
  /** What to say of an effect that does nothing. */
  none: string
  refuse(reason: string): Error
}

/** The JavaScript API's terms: `scenarios.next(operation, { delayMs })`. */
const OPTION_TERMS: EffectTerms = {
  status: '"status"',
  delayMs: '"delayMs"',
  none: 'give it a "status", a "delayMs" or "networkError: true"',
  refuse: (reason) => new RangeError(`Failed to queue a scenario: ${reason}.`),
}

/** The header's terms: `X-Sandbox-Scenario: delay_ms=200`. */
const HEADER_TERMS: EffectTerms = {
  status: 'status',
  delayMs: 'delay_ms',
  none: `give it status=<400-599>, delay_ms=<0-${MAX_DELAY_MS}> or network_error`,
  refuse: (reason) => new RangeError(`X-Sandbox-Scenario: ${reason}`),
}

/** Refuses an effect out of bounds, or one that does nothing, in `terms`. */
function checkEffect(effect: ScenarioEffect, terms: EffectTerms): void {
  const { status, delayMs } = effect
  if (
    status !== undefined &&
    (!Number.isInteger(status) || status < 400 || status > 599)
  ) {
    throw terms.refuse(
      `${terms.status} must be an error status from 400 to 599 (got ${String(status)})`,
    )
  }
  if (
    delayMs !== undefined &&
    (!Number.isInteger(delayMs) || delayMs < 0 || delayMs > MAX_DELAY_MS)
  ) {
    throw terms.refuse(
      `${terms.delayMs} must be a whole number of milliseconds from 0 to ${MAX_DELAY_MS} (got ${String(delayMs)})`,
    )
  }
  if (!hasEffect(effect)) throw terms.refuse(terms.none)
}

/**
 * Reads the `X-Sandbox-Scenario` header: `status=503`, `delay_ms=2000`,
 * `network_error`, combined with `;` or `,`. Throws a `RangeError` that
 * names the part it cannot read.
 *
 * @example
 * parseScenarioHeader('status=503; delay_ms=200') // { status: 503, delayMs: 200 }
 */
export function parseScenarioHeader(value: string): ScenarioEffect {
  const effect: ScenarioEffect = {}
  for (const raw of value.split(/[;,]/)) {
    const part = raw.trim()
    if (part === '') continue
    const [name, arg] = part.split('=', 2).map((s) => s.trim())
    const number =
      arg !== undefined && /^\d{1,6}$/.test(arg) ? Number(arg) : NaN
    if (name === 'status' && !Number.isNaN(number)) effect.status = number
    else if (name === 'delay_ms' && !Number.isNaN(number))
      effect.delayMs = number
    else if (name === 'network_error' && (arg === undefined || arg === 'true'))
      effect.networkError = true
    else
      throw new RangeError(
        `X-Sandbox-Scenario: cannot read "${part.slice(0, 60)}"; use status=<400-599>, delay_ms=<0-${MAX_DELAY_MS}> or network_error`,
      )
  }
  checkEffect(effect, HEADER_TERMS)
  return effect
}

/**
 * Whether an effect does anything: a status, a delay or a network error.
 *
 * @example
 * hasEffect({ networkError: false }) // false
 */
export function hasEffect(effect: ScenarioEffect): boolean {
  return (
    effect.status !== undefined ||
    effect.delayMs !== undefined ||
    effect.networkError === true
  )
}
