// Ids and secrets: seeded streams in deterministic mode, crypto-random otherwise.
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** A source of uniformly distributed 32-bit unsigned integers. */
export type RandomSource = () => number

/**
 * A small seeded PRNG (sfc32), seeded through splitmix32 so that nearby seeds
 * give unrelated streams.
 *
 * @example
 * const next = createSeededRandom(42, 'cus')
 * next() // the same number for the same seed and stream, every run
 */
export function createSeededRandom(seed: number, stream = ''): RandomSource {
  let h = seed >>> 0
  for (let i = 0; i < stream.length; i++) {
    h = Math.imul(h ^ stream.charCodeAt(i), 0x9e3779b1)
  }
  const splitmix = (): number => {
    h = (h + 0x9e3779b9) | 0
    let z = h
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
    return (z ^ (z >>> 16)) >>> 0
  }
  let a = splitmix()
  let b = splitmix()
  let c = splitmix()
  let d = splitmix()
  return () => {
    const t = (((a + b) | 0) + d) | 0
    d = (d + 1) | 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) | 0
    c = (c << 21) | (c >>> 11)
    c = (c + t) | 0
    return t >>> 0
  }
}

/**
 * Cryptographically strong 32-bit integers from the platform's Web Crypto,
 * drawn in batches so each id costs one call at most.
 *
 * @example
 * const next = createCryptoRandom()
 */
export function createCryptoRandom(): RandomSource {
  const buffer = new Uint32Array(1024)
  let index = buffer.length
  return () => {
    if (index === buffer.length) {
      crypto.getRandomValues(buffer)
      index = 0
    }
    return buffer[index++]!
  }
}

/**
 * `prefix` and then `length` base62 characters, without modulo bias
 * (rejection sampling): each character carries log2(62) ≈ 5.95 bits.
 *
 * @example
 * randomBase62(createSeededRandom(1), 14, 'cus_') // e.g. 'cus_4fK2...'
 */
export function randomBase62(
  random: RandomSource,
  length: number,
  prefix = '',
): string {
  // @note Joined once, prefix included: `prefix + digits` or a character at
  // a time would make a chain of strings, which every stored id would keep.
  const digits: string[] = [prefix]
  while (digits.length <= length) {
    let value = random()
    // Each 32-bit draw yields five 6-bit digits; 62 and 63 are rejected.
    for (let i = 0; i < 5 && digits.length <= length; i++) {
      const digit = value & 63
      value >>>= 6
      if (digit < 62) digits.push(BASE62[digit]!)
    }
  }
  return digits.join('')
}

/** The prefixes and lengths of every id and secret the sandbox makes. */
export const ID_FORMATS = {
  customer: { prefix: 'cus_', length: 14 },
  token: { prefix: 'tkn_', length: 14 },
  tokenSecret: { prefix: 'tok_test_', length: 32 },
  apiKey: { prefix: 'sk_test_', length: 24 },
  apiKeyId: { prefix: 'key_', length: 14 },
  account: { prefix: 'acct_', length: 14 },
  request: { prefix: 'req_', length: 16 },
} as const

/** A kind of id the sandbox makes. */
export type IdKind = keyof typeof ID_FORMATS

/** Makes ids and secrets; one independent stream per kind. */
export interface IdGenerator {
  (kind: IdKind): string
  /** How many ids of each kind it has made: a session export records it. */
  draws(): Partial<Record<IdKind, number>>
}

/**
 * Creates an id generator. Deterministic generators draw each kind from its
 * own seeded stream, so creating a token never shifts the next customer id;
 * the others draw from Web Crypto. `skip` fast-forwards each stream, so a
 * replayed session goes on making the ids the original would have made.
 *
 * @example
 * const nextId = createIdGenerator({ seed: 1, deterministic: true })
 * nextId('customer') // 'cus_' + 14 base62 characters, the same every run
 */
export function createIdGenerator(options: {
  seed: number
  deterministic: boolean
  /** Separates the streams of two generators on one seed. */
  salt?: string
  /** Ids of each kind to draw and discard first. */
  skip?: Partial<Record<IdKind, number>>
}): IdGenerator {
  const streams = new Map<IdKind, RandomSource>()
  const counts: Partial<Record<IdKind, number>> = {}
  const shared = options.deterministic ? undefined : createCryptoRandom()
  const next = (kind: IdKind): string => {
    let random = shared ?? streams.get(kind)
    if (!random) {
      random = createSeededRandom(options.seed, `${options.salt ?? ''}${kind}`)
      streams.set(kind, random)
    }
    counts[kind] = (counts[kind] ?? 0) + 1
    const { prefix, length } = ID_FORMATS[kind]
    return randomBase62(random, length, prefix)
  }
  for (const [kind, count] of Object.entries(options.skip ?? {}) as [
    IdKind,
    number,
  ][]) {
    for (let i = 0; i < count; i++) next(kind)
  }
  return Object.assign(next, { draws: () => ({ ...counts }) })
}

/** Whether `value` has the shape of an id or secret of `kind`. */
export function isIdOf(kind: IdKind, value: string): boolean {
  const { prefix, length } = ID_FORMATS[kind]
  if (value.length !== prefix.length + length || !value.startsWith(prefix)) {
    return false
  }
  for (let i = prefix.length; i < value.length; i++) {
    if (!BASE62.includes(value[i]!)) return false
  }
  return true
}

/**
 * The first value `make` gives that nothing `holds` yet: loaded or seeded
 * data (deterministic mode, `sandbox.db`) may hold the next ids and secrets.
 *
 * @example
 * unused(() => nextId('account'), db.accountById) // 'acct_…', free
 */
export function unused(
  make: () => string,
  holds: (value: string) => unknown,
): string {
  let value = make()
  while (holds(value)) value = make()
  return value
}
