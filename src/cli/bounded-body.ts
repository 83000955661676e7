// Reads a live service's answer up to a byte cap, decompressed, for verify and record; says in words what failed.
/** The most of one answer's decoded body `verify` and `record` hold: 8 MB. */
export const DEFAULT_MAX_BODY = 8 * 1024 * 1024

/** An answer whose decoded body went past the cap: reading stopped there. */
export class BodyTooLarge extends Error {
  /** The cap, in bytes. */
  readonly limit: number
  constructor(limit: number, encoded: boolean) {
    super(
      `answer larger than ${formatBytes(limit)}${encoded ? ' after decompression' : ''}; raise --max-body`,
    )
    this.limit = limit
  }
}

/**
 * A byte count as people read it: `8 MB`, `512 KB`, `300 bytes`.
 *
 * @example
 * formatBytes(8 * 1024 * 1024) // '8 MB'
 */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${Number((bytes / 1024 ** 3).toFixed(1))} GB`
  if (bytes >= 1024 ** 2) return `${Number((bytes / 1024 ** 2).toFixed(1))} MB`
  if (bytes >= 1024) return `${Number((bytes / 1024).toFixed(1))} KB`
  return `${bytes} bytes`
}

/**
 * Reads `--max-body`: bytes, or a number with `KB`, `MB` or `GB`.
 *
 * @example
 * parseByteSize('64MB') // 67108864
 */
export function parseByteSize(text: string): number | undefined {
  const match = /^(\d{1,12})\s*(b|kb|mb|gb)?$/i.exec(text.trim())
  if (!match) return undefined
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[
    (match[2] ?? 'b').toLowerCase() as 'b'
  ]
  const bytes = Number(match[1]) * unit
  return bytes > 0 && Number.isSafeInteger(bytes) ? bytes : undefined
}

/** The codings fetch decodes; with any other in the list it decodes none. */
const DECODED_CODINGS = new Set(['gzip', 'x-gzip', 'deflate', 'br'])

/**
 * Whether fetch handed over an answer's body decoded, given its
 * `Content-Encoding`: none, `identity`, or only codings it knows. With an
 * unknown one (`zstd`, `gzip, identity`) it passes the bytes as they came.
 *
 * @example
 * isDecoded('gzip') // true
 * isDecoded('zstd') // false
 */
export function isDecoded(contentEncoding: string | null): boolean {
  const codings = (contentEncoding ?? '')
    .toLowerCase()
    .split(',')
    .map((coding) => coding.trim())
    .filter(Boolean)
  return (
    codings.every((coding) => coding === 'identity') ||
    codings.every((coding) => DECODED_CODINGS.has(coding))
  )
}

/**
 * Reads a fetch answer's (decoded) body up to `limit` bytes, cancelling the
 * stream as soon as it goes past: a gzip bomb or an endless body costs at
 * most `limit` bytes of memory.
 *
 * @example
 * const bytes = await readBounded(await fetch(url), DEFAULT_MAX_BODY)
 */
export async function readBounded(
  response: Response,
  limit: number,
): Promise<Buffer> {
  if (!response.body) return Buffer.alloc(0)
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      // @note Cancelling also ends the connection: the rest is never inflated.
      await reader.cancel().catch(() => undefined)
      const encoding = response.headers.get('content-encoding')
      throw new BodyTooLarge(
        limit,
        encoding !== null && isDecoded(encoding) && encoding !== 'identity',
      )
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks, size)
}

const NETWORK_SENTENCES: Record<string, string> = {
  UND_ERR_SOCKET: 'the connection was closed before the answer ended',
  ECONNRESET: 'the service reset the connection',
  ECONNREFUSED: 'nothing accepts connections at the target (refused)',
  ENOTFOUND: "the target's host name does not resolve",
  EAI_AGAIN: "the target's host name could not be resolved for now",
  ETIMEDOUT: 'the connection to the service timed out',
  EHOSTUNREACH: "the target's host cannot be reached",
  ENETUNREACH: 'the network of the target cannot be reached',
  EPIPE: 'the service closed the connection while the request was sent',
  UND_ERR_CONNECT_TIMEOUT: 'the connection to the service timed out',
  UND_ERR_HEADERS_TIMEOUT: 'the service sent no answer headers in time',
  UND_ERR_BODY_TIMEOUT: 'the service stopped sending the answer midway',
  HPE_INVALID_CONSTANT: 'the service answered something that is not HTTP',
  HPE_UNEXPECTED_CONTENT_LENGTH:
    'the answer has both a Content-Length and a Transfer-Encoding, which HTTP forbids',
  HPE_INVALID_CONTENT_LENGTH: "the answer's Content-Length is not a number",
  HPE_INVALID_TRANSFER_ENCODING: "the answer's Transfer-Encoding is malformed",
  HPE_INVALID_CHUNK_SIZE: "the answer's chunked body is malformed",
  HPE_INVALID_HEADER_TOKEN: "the answer's headers are malformed",
  UND_ERR_HEADERS_OVERFLOW:
    "the answer's headers are larger than Node reads (16 KB unless --max-http-header-size)",
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH:
    "the answer's body is longer or shorter than its Content-Length says",
  Z_DATA_ERROR: 'the answer claimed a compression it does not have',
  DEPTH_ZERO_SELF_SIGNED_CERT:
    "the service's TLS certificate is self-signed and not trusted; to trust it, run with NODE_EXTRA_CA_CERTS set to its PEM file",
  SELF_SIGNED_CERT_IN_CHAIN:
    "the service's TLS certificate chain is not trusted",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    "the service's TLS certificate cannot be verified",
  CERT_HAS_EXPIRED: "the service's TLS certificate has expired",
  ERR_TLS_CERT_ALTNAME_INVALID:
    "the service's TLS certificate is for another host name",
}

/**
 * A network failure as a sentence, with its code after it.
 *
 * @example
 * explainNetworkError(Object.assign(new TypeError('fetch failed'), { cause: { code: 'UND_ERR_SOCKET' } }))
 * // 'the connection was closed before the answer ended (UND_ERR_SOCKET)'
 */
export function explainNetworkError(error: unknown): string {
  let cause = error as { code?: unknown; message?: string; cause?: unknown }
  // @note fetch wraps the socket's error (sometimes twice): the code is inside.
  while (
    cause &&
    typeof cause.code !== 'string' &&
    cause.cause &&
    typeof cause.cause === 'object'
  )
    cause = cause.cause as typeof cause
  const code = typeof cause?.code === 'string' ? cause.code : undefined
  if (code)
    return `${NETWORK_SENTENCES[code] ?? 'the network failed'} (${code})`
  return `the network failed (${cause?.message ?? String(error)})`
}

/**
 * A failed write as people read it, with its code after it.
 *
 * @example
 * explainWriteError(Object.assign(new Error('write'), { code: 'ENOSPC' }))
 * // 'no space left on device (ENOSPC)'
 */
export function explainWriteError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  const sentence: Record<string, string> = {
    ENOSPC: 'no space left on device',
    EDQUOT: 'the disk quota is used up',
    EFBIG: 'the file is larger than this file system allows',
    EIO: 'the disk failed to write',
  }
  return code
    ? `${sentence[code] ?? 'the write failed'} (${code})`
    : (error as Error).message
}

/** How deep `readJson` reads nested arrays and objects: far past any answer of the API. */
export const MAX_JSON_DEPTH = 64

/**
 * `text` parsed as JSON, unless it is not JSON or nests arrays and objects
 * deeper than `MAX_JSON_DEPTH` (`unread` says which). @note A reply within
 * `--max-body` of `[[[[…]]]]` parsed into millions of arrays, hundreds of
 * MB each: a few of them ran a verify out of memory.
 *
 * @example
 * readJson('{"id":"cus_1"}') // { json: { id: 'cus_1' } }
 * readJson('['.repeat(100) + ']'.repeat(100)) // { json: undefined, unread: 'nested deeper than 64 levels' }
 */
export function readJson(text: string): { json: unknown; unread?: string } {
  let depth = 0
  let inString = false
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at)
    if (inString) {
      if (code === 0x5c) at++
      else if (code === 0x22) inString = false
    } else if (code === 0x22) inString = true
    else if (code === 0x5b || code === 0x7b) {
      if (++depth > MAX_JSON_DEPTH)
        return {
          json: undefined,
          unread: `nested deeper than ${MAX_JSON_DEPTH} levels`,
        }
    } else if (code === 0x5d || code === 0x7d) depth--
  }
  try {
    return { json: JSON.parse(text) }
  } catch {
    return { json: undefined }
  }
}
