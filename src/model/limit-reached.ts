// A limit of the sandbox reached, as every part of it says so: the core's
// own checks, and a store that counts a limit across a fleet itself.

/**
 * A store of the sandbox is full. A `RangeError`, as the JavaScript API
 * throws for values out of bounds; the HTTP surface answers it with
 * `409 limit_reached`.
 *
 * @example
 * try { sandbox.scenarios.next('*', { status: 503 }) } catch (error) { error instanceof RangeError }
 */
export class LimitReachedError extends RangeError {
  /** The option that sets the limit, e.g. `limits.scenarios`. */
  readonly option: string

  constructor(option: string, message: string) {
    super(message)
    this.name = 'LimitReachedError'
    this.option = option
  }
}

/** The sentence every limit message ends with: how to make room. */
export const limitHint = (option: string, remedy: string): string =>
  `${remedy}, or raise the option "${option}" (createSandbox({ ${option.replace('.', ': { ')}: N }${option.includes('.') ? ' }' : ''}) or --${option.split('.')[0]} ${option.split('.')[1] ?? option}=N).`
