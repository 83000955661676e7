// How an error names an option: the one message for options that fail their schema, in each reader's words.
import { z } from 'zod'

/**
 * The one message for options that failed their zod schema: the first
 * issue's option (its path), what it must be, and the type that documents
 * it. Every options object (the sandbox's, the server's, the Vite plugin's)
 * reads the same.
 *
 * @example
 * const parsed = z.object({ seed: z.int() }).safeParse({ seed: 'x' })
 * describeOptionsIssue(parsed.error!, 'create a sandbox', 'SandboxOptions')
 * // 'Failed to create a sandbox: option "seed" expected number, received string. See SandboxOptions for its type and default.'
 */
export function describeOptionsIssue(
  error: z.ZodError,
  action: string,
  type: string,
): string {
  const { path, ...issue } = error.issues[0]!
  return `Failed to ${action}: ${
    issue.code === 'unrecognized_keys'
      ? `unknown option "${issue.keys.map((key) => [...path, key].join('.')).join('", "')}". See ${type} for the options there are.`
      : `${path.length === 0 ? 'its options' : `option "${path.join('.')}"`} ${issue.message.replace(/^Invalid input: /, '')}. See ${type} for its type and default.`
  }`
}

/**
 * The error `resolveOptions()` throws for options that failed their zod
 * schema: its message is `describeOptionsIssue()`'s, in the JavaScript API's
 * words; `explain(naming)` names the option as another reader writes it, so
 * the CLI says `--scopes (entry 1) must each be …` rather than
 * `option "scopes.0" … See SandboxOptions`, which its user never wrote.
 *
 * @example
 * const parsed = z.object({ scopes: z.array(z.string()) }).safeParse({ scopes: [1] })
 * optionsTypeError(parsed.error!, 'create a sandbox', 'SandboxOptions').explain(FLAG_NAMING)
 * // 'Failed to create a sandbox: --scopes (entry 1) expected string, received number.'
 */
export function optionsTypeError(
  error: z.ZodError,
  action: string,
  type: string,
): TypeError & { explain: Explain } {
  const message = describeOptionsIssue(error, action, type)
  const { path, ...issue } = error.issues[0]!
  const explain: Explain = (naming) => {
    // @note The JavaScript API keeps its own words, and its pointer to the type.
    if (naming === JS_NAMING) return message
    const [top, ...rest] = path.map(String)
    if (issue.code === 'unrecognized_keys' || top === undefined) {
      return message.replace(/ See \w+ for [^.]*\.$/, '')
    }
    // Keys below the option are its key=N pairs; numbers are list entries.
    const keys = rest.filter((key) => !/^\d+$/.test(key))
    const entry = rest.find((key) => /^\d+$/.test(key))
    const name = `${naming.name(top)}${keys.length > 0 ? ` ${keys.join('.')}` : ''}${entry === undefined ? '' : ` (entry ${Number(entry) + 1})`}`
    return `Failed to ${action}: ${name} ${issue.message.replace(/^(?:Invalid input|Too small|Too big): /, '')}.`
  }
  return Object.assign(new TypeError(message), { explain })
}

/**
 * A value as a message shows it: JSON, cut short, and functions by name.
 *
 * @example
 * showValue('yes') // '"yes"'
 */
export function showValue(value: unknown): string {
  if (typeof value === 'function') return 'a function'
  const json = JSON.stringify(value) ?? String(value)
  return json.length > 60 ? `${json.slice(0, 57)}…` : json
}

/**
 * A whole number from `min` to `max`, with one message for a value of any
 * kind, in the project's words rather than zod's (`expected number to be
 * >=1`): `must be a whole number from 1 to 1000, not 0`, or, with no upper
 * bound of its own, `must be a whole number of at least 1, not 0`. Every
 * bounded number of the options is one, so each flag says the same.
 *
 * @example
 * z.object({ journalLimit: wholeNumber(1) }) // journalLimit: 0 → "must be a whole number of at least 1, not 0"
 */
export function wholeNumber(min: number, max = Number.MAX_SAFE_INTEGER) {
  const bounds = {
    // @note With no upper bound of its own, a number past the safe ones is
    // told the bound it broke, not "of at least 1".
    error: (issue: { input?: unknown }) =>
      `must be a whole number ${max < Number.MAX_SAFE_INTEGER || (issue.input as number) > max ? `from ${min} to ${max}` : `of at least ${min}`}, not ${showValue(issue.input)}`,
  }
  return z.int(bounds).min(min, bounds).max(max, bounds)
}

/**
 * How a message names an option for the one who reads it: the JavaScript
 * API's `port: 0`, the command line's `--port 0`, a Playwright config's
 * `sandboxGlobalSetup({ port: 0 })`. A message written with it tells each
 * reader what to change in their own terms.
 */
export interface OptionNaming {
  /** The option to change, e.g. `the port option` or `--port`. */
  name(option: string): string
  /**
   * The option (a path such as `limits.records`) set to `value`, written as
   * code (`'127.0.0.1'`, `0`, `N`), e.g. `port: 0` or `--port 0`.
   */
  set(option: string, value: string | number): string
}

/** A message that names options through `naming`. */
export type Explain = (naming: OptionNaming) => string

/**
 * Options as the JavaScript API names them.
 *
 * @example
 * JS_NAMING.set('limits.records', 'N') // 'limits: { records: N }'
 */
export const JS_NAMING: OptionNaming = {
  name: (option) => `the ${option} option`,
  set(option, value) {
    const [key, ...rest] = option.split('.')
    return rest.length === 0
      ? `${key}: ${value}`
      : `${key}: { ${JS_NAMING.set(rest.join('.'), value)} }`
  },
}

/**
 * A `RangeError` whose message names options as the JavaScript API does, and
 * whose `explain(naming)` names them for another reader (the CLI's flags).
 *
 * @example
 * throw optionsRangeError((naming) => `Raise ${naming.set('limits.records', 'N')}.`)
 */
export function optionsRangeError(
  explain: Explain,
): RangeError & { explain: Explain } {
  return Object.assign(new RangeError(explain(JS_NAMING)), { explain })
}

/**
 * An error whose message names options to change: `message` names them as
 * the JavaScript API does, `explain(naming)` as another reader would (the
 * CLI names its flags).
 */
export class OptionsError extends Error {
  readonly explain: Explain
  constructor(explain: Explain | string, options?: ErrorOptions) {
    const render = typeof explain === 'string' ? () => explain : explain
    super(render(JS_NAMING), options)
    this.explain = render
  }
}
