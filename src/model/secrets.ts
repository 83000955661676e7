// What a credential looks like, how it is masked, and its digest for lookups.
/**
 * What a Bearer credential may be (RFC 6750 b64token): letters, digits and
 * `-._~+/`, with `=` padding at the end. A secret outside it cannot be sent.
 *
 * @example
 * BEARER_CREDENTIAL.test('sk_test_DemoKeyForTheSandbox0001') // true
 */
export const BEARER_CREDENTIAL: RegExp = /^[A-Za-z0-9\-._~+/]+=*$/

/**
 * A 32-bit FNV-1a digest of the whole secret, the key of the credential
 * index: a lookup by it takes time that depends on the secret's length
 * alone, and the secrets that share a digest are then compared in constant
 * time. Signed, so that V8 keeps it a small integer.
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

/** A session export, as far as its secrets go. */
interface SessionSecrets {
  options: Record<string, unknown>
  data: { api_keys: { secret: string }[]; tokens: { secret: string }[] }
}

/**
 * A session export with every secret masked (API keys, token secrets, the
 * keys of custom fixtures): what `GET /__sandbox/export` answers unless asked
 * for `?secrets=include`. Marked `"secrets": "masked"`; it cannot be replayed.
 *
 * @example
 * maskSession(sandbox.export()).data.api_keys[0].secret // 'sk_test_…0001'
 */
export function maskSession<T extends SessionSecrets>(
  session: T,
): T & { secrets: 'masked' } {
  const fixtures = session.options.fixtures as
    { accounts?: { apiKeys?: { key: string }[] }[] } | undefined
  return {
    ...session,
    secrets: 'masked',
    options: {
      ...session.options,
      ...(fixtures?.accounts && {
        fixtures: {
          ...fixtures,
          accounts: fixtures.accounts.map((account) => ({
            ...account,
            ...(account.apiKeys && {
              apiKeys: account.apiKeys.map((key) => ({
                ...key,
                key: maskSecret(key.key),
              })),
            }),
          })),
        },
      }),
    },
    data: {
      ...session.data,
      api_keys: session.data.api_keys.map((key) => ({
        ...key,
        secret: maskSecret(key.secret),
      })),
      tokens: session.data.tokens.map((token) => ({
        ...token,
        secret: maskSecret(token.secret),
      })),
    },
  }
}

/**
 * Whether a secret is in the masked form `maskSecret` gives (a prefix, `…`,
 * at most its last four characters): a session holding one was exported
 * without its secrets and cannot be replayed, and a journal entry holds no
 * other.
 *
 * @example
 * isMaskedSecret('sk_test_…0001') // true
 */
export function isMaskedSecret(secret: string): boolean {
  return /^(sk_test_|tok_test_)?…(.{4})?$/.test(secret)
}
