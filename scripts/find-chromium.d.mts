/** Where Debian, Ubuntu and Google's packages put the browser. */
export declare const SYSTEM_CHROMIUM: readonly string[]
/** The flags the tests launch it with. */
export declare const CHROMIUM_ARGS: readonly string[]
/**
 * The path of a Chromium: `CHROMIUM_PATH` or `CHROME_PATH`, Playwright's own,
 * the system's; as root in CI, Debian's installed with apt-get when none is found.
 */
export declare function findChromium(options?: {
  env?: Record<string, string | undefined>
  install?: boolean
  log?: (message: string) => void
}): Promise<string>
