// Request bodies: content type, size, JSON, and zod issues as field errors.
import type { z } from 'zod'
import {
  MAX_FIELD_ERRORS,
  SandboxError,
  validationError,
  type FieldError,
} from './errors.ts'
import { SCOPE_PATTERN } from '../model/schemas.ts'
import { maskSecret } from '../model/secrets.ts'

/** Which `Content-Type`s an operation reads a JSON body from. */
export type BodyTypes = 'json' | 'json-or-text'

/**
 * Checks the media type: `application/json` (any parameters, any case) always;
 * with `json-or-text`, also no header and `text/plain`, as `fetch` sends for a
 * string body when the caller names no type. A `charset` other than UTF-8 is
 * refused, as the body is read as UTF-8.
 *
 * @example
 * checkContentType('application/json; charset=utf-8', 'json') // passes
 */
export function checkContentType(
  header: string | null,
  types: BodyTypes,
): void {
  const media = header?.split(';', 1)[0]!.trim().toLowerCase()
  if (
    media === 'application/json' ||
    (types === 'json-or-text' &&
      (media === undefined || media === 'text/plain'))
  ) {
    checkCharset(header)
    return
  }
  const accepted =
    types === 'json'
      ? '"Content-Type: application/json"'
      : 'application/json, text/plain or no Content-Type'
  throw new SandboxError(
    'unsupported_media_type',
    header === null
      ? `Send the body as JSON with ${accepted}.`
      : `"${header.slice(0, 100)}" is not accepted here; send JSON with ${accepted}.`,
    { headers: { 'accept-post': 'application/json' } },
  )
}

/**
 * Refuses a body whose `Content-Type` names a charset other than UTF-8, as
 * every body is read as UTF-8.
 *
 * @example
 * checkCharset('application/json; charset=latin1') // throws a 415 problem
 */
export function checkCharset(header: string | null): void {
  const charset = charsetOf(header)
  // @note The body is read as UTF-8 whatever it says: another charset
  // would be read wrong, not converted.
  if (charset === undefined || /^utf-?8$/i.test(charset)) return
  throw new SandboxError(
    'unsupported_media_type',
    `The body is sent with charset=${clip(charset)}, which the sandbox does not read; send it as UTF-8 (charset=utf-8, or no charset).`,
    { headers: { 'accept-post': 'application/json' } },
  )
}

/** The `charset` parameter of a `Content-Type`, unquoted, or undefined. */
function charsetOf(header: string | null): string | undefined {
  const match =
    header && /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(header)
  return match ? (match[1] ?? match[2]) : undefined
}

/**
 * Reads a body of at most `maxBytes` once, as bytes. A larger one is refused
 * from its `Content-Length` before anything is read; a server adapter reads
 * a body without one with a running limit, so that an oversized body is
 * never buffered whole.
 *
 * @example
 * const text = await readBody(request, 1_048_576)
 */
export async function readBody(
  request: Request,
  maxBytes: number,
): Promise<string> {
  const encoding = request.headers.get('content-encoding')?.trim()
  if (encoding && encoding.toLowerCase() !== 'identity') {
    // @note Never inflated: a compressed body is refused before it is read.
    throw new SandboxError(
      'unsupported_media_type',
      `The body is sent with Content-Encoding: ${clip(encoding)}, which the sandbox does not decode; send it uncompressed (no Content-Encoding).`,
      { headers: { 'accept-encoding': 'identity' } },
    )
  }
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > maxBytes) {
    throw payloadTooLarge(maxBytes)
  }
  // @note bytes() is newer than some browsers MSW runs in.
  const bytes =
    typeof request.bytes === 'function'
      ? await request.bytes()
      : new Uint8Array(await request.arrayBuffer())
  if (bytes.byteLength > maxBytes) throw payloadTooLarge(maxBytes)
  return decode(bytes)
}

/**
 * The problem for a body over `maxBytes`.
 *
 * @example
 * throw payloadTooLarge(1_048_576)
 */
export const payloadTooLarge = (maxBytes: number): SandboxError =>
  new SandboxError(
    'payload_too_large',
    `The request body is larger than ${maxBytes} bytes.`,
  )

// Fatal: bad UTF-8 is refused, never read as U+FFFD. A leading BOM is
// dropped, as a web Request's text() drops it. Without `stream`, one decoder
// keeps no state from a call to the next.
const UTF8 = new TextDecoder('utf-8', { fatal: true })

function decode(bytes: Uint8Array): string {
  try {
    return UTF8.decode(bytes)
  } catch (error) {
    // @note A fatal decoder throws a TypeError for bad UTF-8, and only then:
    // anything else is a body too long to be one string in this runtime
    // (Node's ERR_STRING_TOO_LONG, a browser's RangeError), not bad bytes.
    throw error instanceof TypeError
      ? new SandboxError('invalid_json', 'The request body is not valid UTF-8.')
      : new SandboxError(
          'payload_too_large',
          `The request body (${bytes.byteLength} bytes) is too large to read as text in this runtime.`,
        )
  }
}

/**
 * Parses a JSON object, or throws `400 invalid_json` saying what is wrong.
 *
 * @example
 * parseJsonObject('{"name":"Ada"}') // { name: 'Ada' }
 */
export function parseJsonObject(text: string): Record<string, unknown> {
  if (text.trim() === '') {
    throw new SandboxError(
      'invalid_json',
      'The request body is empty; send a JSON object.',
    )
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    const reason = error instanceof SyntaxError ? `: ${error.message}` : ''
    throw new SandboxError(
      'invalid_json',
      `The request body is not valid JSON${reason.slice(0, 200)}.`,
    )
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const kind =
      value === null
        ? 'null'
        : Array.isArray(value)
          ? 'an array'
          : `a ${typeof value}`
    throw new SandboxError(
      'invalid_json',
      `The request body must be a JSON object, not ${kind}.`,
    )
  }
  return value as Record<string, unknown>
}

const pointerOf = (path: readonly PropertyKey[]): string =>
  '/' +
  path.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')

const labelOf = (path: readonly PropertyKey[]): string =>
  path.reduce<string>(
    (label, part) =>
      typeof part === 'number'
        ? `${label}[${part}]`
        : label
          ? `${label}.${String(part)}`
          : String(part),
    '',
  )

const valueAt = (body: unknown, path: readonly PropertyKey[]): unknown =>
  path.reduce<unknown>(
    (value, key) =>
      value !== null && typeof value === 'object'
        ? (value as Record<PropertyKey, unknown>)[key]
        : undefined,
    body,
  )

/** The most characters of a sent name or value that an error quotes. */
const ECHO_MAX = 100
/** The longest message of one field error. */
const MESSAGE_MAX = 300

/**
 * Cuts `text` to `max` UTF-16 units, ending in "…" when cut (never inside a
 * surrogate pair), so that a huge field name or value is quoted briefly.
 *
 * @example
 * clip('x'.repeat(500), 10) // 'xxxxxxxxx…'
 */
export function clip(text: string, max: number = ECHO_MAX): string {
  if (text.length <= max) return text
  let end = max - 1
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return `${text.slice(0, end)}…`
}

/** A sent value as an error may quote it: short, and never a full secret. */
const echo = (value: string): string =>
  /^(sk_test_|tok_test_)/.test(value) ? maskSecret(value) : clip(value)

/** A noun with its indefinite article: "an array", "a string". */
const withArticle = (noun: string): string =>
  `${/^[aeiou]/.test(noun) ? 'an' : 'a'} ${noun}`

const describe = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'an array'
      : // @note JSON.parse reads 1e400 as Infinity, which a schema refuses
        // as no number: "must be a number, not a number" said nothing.
        typeof value === 'number' && !Number.isFinite(value)
        ? 'a number too large to read (beyond ±1.8e308)'
        : withArticle(typeof value)

/** Field-specific wording, so every message names the bounds it enforces. */
export interface FieldMessages {
  [field: string]: ((issue: z.core.$ZodIssue) => string) | undefined
}

/**
 * Validates a parsed body with a zod schema and maps every issue to the
 * contract's `errors[]`: one entry per problem, naming the field.
 *
 * @example
 * const body = validateBody(schema, json, { expires_in: () => 'expires_in must be …' })
 */
export function validateBody<T>(
  schema: z.ZodType<T>,
  body: Record<string, unknown>,
  messages: FieldMessages = {},
): T {
  // @note zod names every unknown key of a strict object, and an error was
  // made for each before all but MAX_FIELD_ERRORS were dropped: the 88,000
  // keys of a 1 MiB body held the event loop for 170-500 ms. zod is given
  // the known keys and the first MAX_FIELD_ERRORS unknown ones, in the
  // order sent, so the same ones are named; the rest are only counted. No
  // prototype, so that a sent __proto__ stays a key.
  const { shape, catchall } = (schema as unknown as z.ZodObject).def
  let kept = 0
  let more = 0
  if ((catchall as z.ZodType | undefined)?.def.type === 'never') {
    const few: Record<string, unknown> = Object.create(null)
    for (const key in body)
      if (Object.hasOwn(shape, key) || kept++ < MAX_FIELD_ERRORS)
        few[key] = body[key]
      else more++
    body = few
  }
  const result = schema.safeParse(body)
  if (result.success) return result.data
  const errors: FieldError[] = []
  for (const issue of result.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        errors.push({
          field: clip(key),
          pointer: clip(pointerOf([...issue.path, key])),
          code: 'unknown_field',
          message:
            key === 'id'
              ? 'id is set by the sandbox and cannot be sent'
              : `${clip(labelOf([...issue.path, key]))} is not a field of this request`,
        })
      }
      continue
    }
    // @note z.int() bounds a number to the safe integers besides the
    // field's own min and max: 1e300 broke both, and the answer named two
    // maxima. The field's own bound is the one to name.
    type Bound = { origin?: string }
    if (
      (issue as Bound).origin === 'int' &&
      result.error.issues.some(
        (other) =>
          (other as Bound).origin === 'number' &&
          `${other.path}` === `${issue.path}`,
      )
    )
      continue
    const field = clip(String(issue.path[0] ?? ''))
    const label = clip(labelOf(issue.path))
    const value = valueAt(body, issue.path)
    let code: string
    let message: string
    switch (issue.code) {
      case 'invalid_type':
        code =
          value === undefined
            ? 'required'
            : issue.expected === 'int' && typeof value === 'number'
              ? 'not_integer'
              : 'invalid_type'
        message =
          code === 'required'
            ? `${label} is required`
            : code === 'not_integer'
              ? `${label} must be a whole number`
              : `${label} must be ${issue.expected === 'int' ? 'an integer' : withArticle(issue.expected)}, not ${describe(value)}`
        break
      case 'too_small':
      case 'too_big':
        code =
          issue.origin === 'array'
            ? issue.code === 'too_small'
              ? 'too_few'
              : 'too_many'
            : issue.origin === 'string'
              ? issue.code === 'too_small'
                ? 'too_short'
                : 'too_long'
              : 'out_of_range'
        message =
          issue.origin === 'string'
            ? issue.code === 'too_small'
              ? `${label} must be at least ${String(issue.minimum)} characters long`
              : `${label} must be at most ${String(issue.maximum)} characters long`
            : issue.origin === 'array'
              ? `${label} must list ${issue.code === 'too_small' ? `at least ${String((issue as { minimum?: unknown }).minimum)}` : `at most ${String((issue as { maximum?: unknown }).maximum)}`} entries`
              : issue.code === 'too_small'
                ? `${label} must be ${issue.inclusive === false ? 'more than' : 'at least'} ${String(issue.minimum)}`
                : `${label} must be ${issue.inclusive === false ? 'less than' : 'at most'} ${String(issue.maximum)}`
        break
      case 'invalid_format':
        code = 'invalid_format'
        message =
          issue.format === 'email'
            ? `${label} must be an email address`
            : issue.format === 'regex' && typeof value === 'string'
              ? `${label} must match ${String((issue as { pattern?: unknown }).pattern)}, not "${echo(value)}"`
              : `${label} must be in ${issue.format} format`
        break
      case 'invalid_value': {
        // Scopes are the one field whose values come from a catalog.
        const scope = field === 'scopes'
        const isScope =
          scope && typeof value === 'string' && SCOPE_PATTERN.test(value)
        code = isScope ? 'unknown_scope' : 'invalid_format'
        message = isScope
          ? `${label} "${echo(value)}" is not in the scope catalog (${issue.values.join(', ')})`
          : typeof value !== 'string'
            ? `${label} must be one of ${issue.values.join(', ')}`
            : scope
              ? `${label} "${echo(value)}" is not a scope of the form <resource>:<access> in the catalog (${issue.values.join(', ')})`
              : `${label} "${echo(value)}" is not one of ${issue.values.join(', ')}`
        break
      }
      case 'custom':
        code = String(
          (issue.params as { code?: unknown } | undefined)?.code ?? 'invalid',
        )
        message = issue.message
        break
      default:
        code = 'invalid'
        message = `${label} is invalid`
    }
    const special = messages[field]?.(issue)
    errors.push({
      field,
      pointer: clip(pointerOf(issue.path)),
      code,
      message: clip(special ?? message, MESSAGE_MAX),
    })
  }
  // One problem can raise two issues (1e20 is both too big and not an integer).
  const seen = new Set<string>()
  throw validationError(
    errors.filter((error) => {
      const key = `${error.pointer}\n${error.code}\n${error.message}`
      if (seen.has(key)) return false
      seen.add(key)
      return true
    }),
    more,
  )
}
