/**
 * The operations of the API by name: the one list that the route table, the
 * scenario targets, the journal and the OpenAPI document take their names,
 * methods and paths from. Each is answered by its handler file in
 * `handlers/`.
 *
 * @example
 * OPERATIONS.createCustomer.path // '/v1/customers'
 */
export const OPERATIONS = {
  createCustomer: { method: 'POST', path: '/v1/customers' },
  createToken: { method: 'POST', path: '/v2/tokens' },
} as const

/** An operation of the interface, as scenarios and the journal name it. */
export type Operation = keyof typeof OPERATIONS

/** The operations' names, for schemas that list them. */
export const OPERATION_NAMES = Object.keys(OPERATIONS) as [
  Operation,
  ...Operation[],
]
