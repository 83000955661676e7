// The API's operation names, for the modules below the handlers.
/**
 * The names of the API's operations, for the modules below the handlers
 * (scenarios, the journal, the schemas) that need the names only. Each is
 * defined by its handler file and listed once in `handlers/index.ts`, which
 * the compiler and a test hold to this list: add a name here, and the
 * compiler asks for its handler there.
 *
 * @example
 * OPERATION_NAMES.includes('createCustomer') // true
 */
export const OPERATION_NAMES = ['createCustomer', 'createToken'] as const

/** An operation of the interface, as scenarios and the journal name it. */
export type Operation = (typeof OPERATION_NAMES)[number]
