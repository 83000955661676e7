import type { z } from 'zod'

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
