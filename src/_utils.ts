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

/**
 * A 53-bit string hash (cyrb53) as a string: fast, and easily made to
 * collide on purpose, so never where a collision changes an answer (see
 * {@link bodyFingerprint}).
 */
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
 * A request body's fingerprint for its `Idempotency-Key`: SHA-256, so that
 * no two bodies share one (a 53-bit hash could be made to collide in
 * seconds, and the second body was answered as a replay of the first);
 * {@link hashString} where a runtime has no `crypto.subtle`.
 *
 * @example
 * await bodyFingerprint('{"name":"Ada"}') // 'sha256:…' (the digest in base64)
 */
export async function bodyFingerprint(text: string): Promise<string> {
  const subtle = globalThis.crypto?.subtle
  if (!subtle) return hashString(text)
  const digest = await subtle.digest('SHA-256', new TextEncoder().encode(text))
  return `sha256:${btoa(String.fromCharCode(...new Uint8Array(digest)))}`
}

// Characters Unicode renders as nothing (Default_Ignorable_Code_Point, those
// of the Basic Multilingual Plane) and Hangul fillers, as class contents.
const IGNORABLE =
  '\\u00AD\\u034F\\u061C\\u115F\\u1160\\u17B4\\u17B5\\u180B-\\u180F\\u200B-\\u200F\\u202A-\\u202E\\u2060-\\u206F\\u3164\\uFE00-\\uFE0F\\uFEFF\\uFFA0\\uFFF0-\\uFFF8'
// `\s` without the control characters in it but tab and line breaks.
const SPACES =
  '\\t\\n\\r\\u0020\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000'
// Nothing any text holds: control characters other than tab and line
// breaks (whitespace, kept as sent), and unpaired surrogates (with the `u`
// flag a surrogate range matches only those).
const NOT_TEXT =
  '\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF'
// Combining marks, which need a base: the Combining Diacritical Marks
// blocks. Written as ranges, not `\p{M}`, which not every pattern reader
// takes.
const MARKS =
  '\\u0300-\\u036F\\u1AB0-\\u1AFF\\u1DC0-\\u1DFF\\u20D0-\\u20FF\\uFE20-\\uFE2F'

/**
 * What counts as a visible character, as an ECMA-262 pattern (with the `u`
 * flag, as JSON Schema validators read it): anything but whitespace (`\s`),
 * the characters Unicode renders as nothing (Default_Ignorable_Code_Point,
 * those of the Basic Multilingual Plane: zero-width spaces and joiners, the
 * bidirectional marks, embeddings, overrides and isolates, the soft hyphen,
 * invisible operators, variation selectors), Hangul fillers, the braille
 * blank, combining diacritical marks (which need a base) and control characters or
 * unpaired surrogates. Here, apart from the schemas, so that the Playwright
 * fixture can use it without zod.
 *
 * @example
 * new RegExp(VISIBLE_CHARACTER_PATTERN, 'u').test('\u200E') // false
 */
export const VISIBLE_CHARACTER_PATTERN = `[^\\s${IGNORABLE}${MARKS}\\u2800${NOT_TEXT}]`

/**
 * A character that no free text may hold anywhere, as an ECMA-262 pattern
 * (`u` flag): a control character (U+0000–U+001F, U+007F–U+009F) other
 * than tab, line feed and carriage return, or an unpaired surrogate.
 *
 * @example
 * new RegExp(NOT_TEXT_PATTERN, 'u').test('A\u0000B') // true
 */
export const NOT_TEXT_PATTERN = `[${NOT_TEXT}]`

/**
 * The whole rule of a free text with a visible character, anchored: no
 * control character or unpaired surrogate anywhere, and a visible one. What
 * comes before the first visible character is one class disjoint from it,
 * so that a validator matches it in linear time.
 *
 * @example
 * new RegExp(VISIBLE_TEXT_PATTERN, 'u').test('\u0301\u0301') // false
 */
export const VISIBLE_TEXT_PATTERN = `^[${SPACES}${IGNORABLE}${MARKS}\\u2800]*${VISIBLE_CHARACTER_PATTERN}[^${NOT_TEXT}]*$`

/**
 * The rule of a free text that may be empty, anchored: no control character
 * or unpaired surrogate anywhere.
 *
 * @example
 * new RegExp(TEXT_PATTERN, 'u').test('') // true
 */
export const TEXT_PATTERN = `^[^${NOT_TEXT}]*$`

/**
 * A URL as messages show it: without its password.
 *
 * @example
 * redactUrl('redis://app:secret@redis.internal:6379/0') // 'redis://app:***@redis.internal:6379/0'
 * redactUrl('redis://') // 'redis://'
 */
export function redactUrl(url: string): string {
  // @note The user's part ends at the last `@`: a password may hold `/`, `:`
  // or `@`, and a parser that ends the host at the first `/` reads such a
  // password as a path (or fails), and would show it.
  const scheme = /^[a-z][\w+.-]*:\/\//i.exec(url)?.[0]
  const at = url.lastIndexOf('@')
  const user = scheme && at > scheme.length ? url.slice(scheme.length, at) : ''
  const colon = user.indexOf(':')
  const shown =
    colon === -1 ? url : `${scheme}${user.slice(0, colon)}:***${url.slice(at)}`
  try {
    const parsed = new URL(shown)
    const text = parsed.toString()
    // @note Only a path's trailing `/` after a host is dropped: with no host
    // (`redis://`), the last `/` is the scheme's, and `redis:/` is no URL.
    return parsed.host !== '' && text.endsWith('/') ? text.slice(0, -1) : text
  } catch {
    return shown
  }
}
