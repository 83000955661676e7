// The package's version, for the document and --version.
/**
 * The package's version, as package.json has it (a test keeps the two
 * equal): importing package.json would put all of it in the browser bundle.
 *
 * @example
 * `customer-token-sandbox ${VERSION}`
 */
export const VERSION = '0.1.0'
