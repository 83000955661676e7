// Small helpers of the core: a timer-proof sleep, a string hash, the visible-character pattern, a URL shown without its password.
// @note Captured when the module loads, so that fake timers installed by a
// test later do not stall the sandbox's own delays.
const loadedSetTimeout = globalThis.setTimeout
// Where @sinonjs/fake-timers keeps the function it replaced.
const FAKED_ORIGINAL = '_setTimeout'

/**
 * The host's own `setTimeout`. Fake timers installed before this module
 * loaded (a setup file) were captured above: @sinonjs/fake-timers, behind
 * Vitest's and Jest's, keeps the original as `clock._setTimeout`.
 */
const realSetTimeout = (): typeof setTimeout =>
  (
    loadedSetTimeout as {
      clock?: Partial<Record<typeof FAKED_ORIGINAL, typeof setTimeout>>
    }
  ).clock?.[FAKED_ORIGINAL] ?? loadedSetTimeout

/** Waits `ms` milliseconds of real time, whatever fake timers are installed. */
export function sleep(ms: number): Promise<void> {
  return ms <= 0
    ? Promise.resolve()
    : new Promise((resolve) => realSetTimeout()(resolve, ms))
}

/** A 53-bit string hash (cyrb53) as a string: a request body's fingerprint. */
export function hashString(text: string): string {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ c, 2654435761)
    h2 = Math.imul(h2 ^ c, 1597334677)
  }
  h1 =
    Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^
    Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 =
    Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^
    Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return `${text.length}:${(4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36)}`
}

/**
 * What counts as a visible character, as an ECMA-262 pattern that JSON Schema
 * validators read the same way: anything but whitespace (`\s`) and the
 * characters Unicode renders as nothing (Default_Ignorable_Code_Point, those
 * of the Basic Multilingual Plane): zero-width spaces and joiners, the
 * bidirectional marks, embeddings, overrides and isolates, the soft hyphen,
 * invisible operators, variation selectors and Hangul fillers. Here, apart
 * from the schemas, so that the Playwright fixture can use it without zod.
 *
 * @example
 * new RegExp(VISIBLE_CHARACTER_PATTERN, 'u').test('\u200E') // false
 */
export const VISIBLE_CHARACTER_PATTERN =
  '[^\\s\\u00AD\\u034F\\u061C\\u115F\\u1160\\u17B4\\u17B5\\u180B-\\u180F\\u200B-\\u200F\\u202A-\\u202E\\u2060-\\u206F\\u3164\\uFE00-\\uFE0F\\uFEFF\\uFFA0\\uFFF0-\\uFFF8]'

/**
 * A URL as messages show it: without its password.
 *
 * @example
 * redactUrl('redis://app:secret@redis.internal:6379/0') // 'redis://app:***@redis.internal:6379/0'
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString().replace(/\/$/, '')
  } catch {
    // @note A URL that does not parse (a bad port) may still hold a password.
    return url.replace(/^([a-z][\w+.-]*:\/\/[^/:@]*:)[^/@]*@/i, '$1***@')
  }
}
