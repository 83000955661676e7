// The refusal of a write past a limit that a store shared by replicas counts itself.

/**
 * A limit that a store shared by replicas counts itself across them (Redis's
 * `limits.records`) was reached: the write was not stored, and is refused
 * as `409 limit_reached`, naming the option.
 *
 * @example
 * throw new StoreLimitReached('limits.records', 'The sandbox holds 100 records …; nothing was stored.')
 */
export class StoreLimitReached extends Error {
  /** The option that sets the limit, e.g. `limits.records`. */
  readonly option: string

  constructor(option: string, message: string) {
    super(message)
    this.name = 'StoreLimitReached'
    this.option = option
  }
}
