// What the replicas sharing one store must agree on, and what only shaped the data the store began with.
import { hashString } from '../_utils.ts'

/**
 * The options that change what a replica decides or answers, request after
 * request: validation, uniqueness, caps, token rules, rate limits, the
 * Idempotency-Key window, latency, the clock after a set, the journal's
 * length and how ids are drawn. Replicas that differ in one would answer
 * the same call differently, so a replica refuses to join a fleet that
 * runs with other values.
 */
const RULES = [
  'unknownFields',
  'requiredFields',
  'nameLength',
  'emailMaxLength',
  'uniqueEmail',
  'scopes',
  'maxScopes',
  'expiresIn',
  'v1AcceptsTokens',
  'tokenIssuers',
  'rateLimit',
  'latency',
  'maxBodyBytes',
  'clockAfterSet',
  'idempotency',
  'limits',
  'journalLimit',
  'deterministic',
] as const

/**
 * The options that only shape the data a new store starts with: once the
 * store holds the sandbox, its data fixes them, and a replica's own go unused.
 */
const SEEDED = ['seed', 'customersPerAccount', 'fixtures'] as const

/** A rate limit or a latency, as the sandbox resolved it. */
type Timed =
  | { limit: number; windowSeconds: number }
  | { min: number; max: number }
  | false

/**
 * The sandbox's options (its `ResolvedOptions`) that a fleet's record is
 * made of.
 */
export type FleetOptionsSource = Readonly<
  Record<(typeof RULES)[number] | (typeof SEEDED)[number], unknown>
> & { readonly rateLimit: Timed; readonly latency: Timed }

/** A value as a fleet's record keeps it, and as a message shows it. */
type Shown = string | number | boolean

/**
 * The options a fleet's store keeps beside its data: its rules, and the
 * options its data was seeded with (absent when the store held data before
 * it kept them), each by its option path (`limits.records`).
 */
export interface FleetOptions {
  rules: Record<string, Shown>
  seeded?: Record<string, Shown>
}

/** An option whose value in the fleet's record differs from a replica's. */
export interface FleetDifference {
  /** The option's path, e.g. `uniqueEmail` or `limits.records`. */
  option: string
  /** Its value in the fleet. */
  fleet: Shown
  /** Its value on this replica. */
  own: Shown
}

/**
 * The record of `options` that a fleet keeps: key=N options by key, lists
 * joined with commas, a rate limit and a latency as their flags write them,
 * and the fixtures as a hash.
 *
 * @example
 * fleetOptionsOf(resolveOptions({ uniqueEmail: true })).rules.uniqueEmail // true
 */
export function fleetOptionsOf(options: FleetOptionsSource): FleetOptions {
  const record = (names: readonly (keyof FleetOptionsSource)[]) => {
    const kept: Record<string, Shown> = {}
    for (const name of names) {
      const value = options[name]
      if (name === 'rateLimit' || name === 'latency') {
        kept[name] = showTimed(options[name])
      } else if (name === 'fixtures') {
        // Only to tell them apart: a hash, not the accounts and their keys.
        kept[name] = hashString(JSON.stringify(value))
      } else if (Array.isArray(value)) {
        kept[name] = value.join(',')
      } else if (typeof value === 'object' && value !== null) {
        for (const [key, inner] of Object.entries(value))
          kept[`${name}.${key}`] = inner as Shown
      } else {
        kept[name] = value as Shown
      }
    }
    return kept
  }
  return { rules: record(RULES), seeded: record(SEEDED) }
}

/** A rate limit as `10/60s`, a latency as `50-200ms`, either off as `off`. */
function showTimed(value: Timed): string {
  if (value === false) return 'off'
  if ('limit' in value) return `${value.limit}/${value.windowSeconds}s`
  return value.min === value.max
    ? `${value.min}ms`
    : `${value.min}-${value.max}ms`
}

/**
 * Where a replica's options differ from its fleet's record: in a rule (the
 * replica must not join), or in what shaped the seeded data (unused). An
 * option one side does not know (a record kept by another release) is no
 * difference.
 *
 * @example
 * compareFleetOptions(fleet, fleetOptionsOf(sandbox.options)).rules // [{ option: 'uniqueEmail', fleet: true, own: false }]
 */
export function compareFleetOptions(
  fleet: FleetOptions,
  own: FleetOptions,
): { rules: FleetDifference[]; seeded: FleetDifference[] } {
  const differences = (
    theirs: Record<string, Shown> | undefined,
    mine: Record<string, Shown> | undefined,
  ): FleetDifference[] =>
    Object.entries(mine ?? {}).flatMap(([option, value]) =>
      theirs !== undefined && option in theirs && theirs[option] !== value
        ? [{ option, fleet: theirs[option]!, own: value }]
        : [],
    )
  return {
    rules: differences(fleet.rules, own.rules),
    seeded: differences(fleet.seeded, own.seeded),
  }
}

/**
 * Reads a fleet's record as a store holds it (JSON); `undefined` when it is
 * not one.
 *
 * @example
 * parseFleetOptions('{"rules":{"uniqueEmail":true}}')?.rules.uniqueEmail // true
 */
export function parseFleetOptions(text: string): FleetOptions | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  const isRecord = (item: unknown): item is Record<string, Shown> =>
    typeof item === 'object' &&
    item !== null &&
    !Array.isArray(item) &&
    Object.values(item).every((inner) =>
      ['string', 'number', 'boolean'].includes(typeof inner),
    )
  if (typeof value !== 'object' || value === null) return undefined
  const { rules, seeded } = value as Record<string, unknown>
  if (!isRecord(rules) || (seeded !== undefined && !isRecord(seeded)))
    return undefined
  return { rules, ...(seeded !== undefined && { seeded }) }
}
