import { build } from 'tsdown'

/**
 * Builds the package once before the suite, so the CLI tests spawn the
 * `bin` that consumers run rather than a stale one.
 */
export default async function setup(): Promise<void> {
  await build({ logLevel: 'error' })
}
