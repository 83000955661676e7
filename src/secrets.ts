/**
 * A 32-bit FNV-1a hash over the whole secret: it buckets credentials for an
 * O(1) lookup, and its running time depends on the length alone. Signed, so
 * that V8 keeps it a small integer: unsigned Map keys above 2³¹ measured
 * about twice as slow.
 *
 * @example
 * secretHash('sk_test_DemoKeyForTheSandbox0001') // a stable 32-bit number
 */
export function secretHash(secret: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < secret.length; i++) {
    hash = Math.imul(hash ^ secret.charCodeAt(i), 0x01000193)
  }
  return hash | 0
}

/**
 * Compares two strings in time that depends only on their lengths, so a
 * caller cannot learn a secret one character at a time.
 *
 * @example
 * constantTimeEqual(sent, stored) // true only when identical
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const length = Math.max(a.length, b.length)
  let diff = a.length ^ b.length
  for (let i = 0; i < length; i++) {
    diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0)
  }
  return diff === 0
}

/**
 * The masked form of a secret that logs, the journal and inspection show:
 * its prefix and its last four characters.
 *
 * @example
 * maskSecret('sk_test_DemoKeyForTheSandbox0001') // 'sk_test_…0001'
 */
export function maskSecret(secret: string): string {
  const prefix = secret.startsWith('sk_test_')
    ? 'sk_test_'
    : secret.startsWith('tok_test_')
      ? 'tok_test_'
      : ''
  if (secret.length < prefix.length + 8) return `${prefix}…`
  return `${prefix}…${secret.slice(-4)}`
}
