// The recorded session file: its format, and a bounded reader of it.
import { createReadStream } from 'node:fs'
import { open, stat } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { createCryptoRandom, ID_FORMATS, randomBase62 } from './ids.ts'
import { isMaskedSecret, maskSecret } from './secrets.ts'

/** One call that went through the recorder, secrets masked. */
export interface RecordedExchange {
  at: string
  duration_ms: number
  request: {
    method: string
    path: string
    headers: Record<string, string>
    body: string
  }
  response: {
    status: number
    headers: Record<string, string>
    body: string
    /**
     * Why `body` is not the service's answer: it was larger than `maxBody`,
     * or the service stopped sending it.
     */
    note?: string
  }
}

/** The first line of a session that `record` appends to, one exchange a line after it. */
export const RECORDING_FORMAT = 'customer-token-sandbox/recording'

/** The first line of a recording: what the session starts from. */
export interface RecordingHeader {
  format: typeof RECORDING_FORMAT
  version: 1
  /** The live service's base URL. */
  target: string
  /**
   * Whether token secrets, and the keys of the session's own fixtures, were
   * kept in full (`record --keep-secrets`).
   */
  keep_secrets: boolean
  /**
   * The sandbox's session at the start, as `sandbox.export()` gives it,
   * without `deterministic` in its options: a recording is no deterministic
   * sandbox's state, and the sandbox that starts from it keeps its own.
   * Unless `keep_secrets`, the secrets of its API keys but the documented
   * ones are masked (recordings made before kept them in full).
   */
  session: {
    options: Record<string, unknown>
    data: {
      accounts: { id: string }[]
      api_keys: {
        id: string
        account_id: string
        secret?: string
        revoked?: boolean
      }[]
      customers: Record<string, unknown>[]
      tokens: Record<string, unknown>[]
    }
  } & Record<string, unknown>
}

/** A session file that cannot be read: the CLI prints it as a usage mistake. */
export class SessionFileError extends Error {}

/**
 * The JSON object `text` holds, or `undefined` for anything else (bad JSON,
 * an array, a value): a line of a session, a recorded body.
 *
 * @example
 * asObject('{"id":"cus_1"}') // { id: 'cus_1' }
 */
export const asObject = (text: string): Record<string, unknown> | undefined => {
  try {
    const value = JSON.parse(text) as unknown
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

/**
 * Reads a session file: a recording that `record` appended (JSON Lines) or a
 * single JSON session (what `GET /__sandbox/export` and earlier `record`
 * releases wrote). A recording comes back as the session it stands for,
 * with the customers (and, when kept, the tokens) the service created and
 * its exchanges under `recorded`, so `--from`, `verify --from` and
 * `createSandbox({ from })` take either.
 *
 * @example
 * const sandbox = createSandbox({ from: await readSessionFile('session.jsonl') })
 * @see startRecorder
 */
export async function readSessionFile(
  path: string,
  /** How messages name the file: `--from session.jsonl`. */
  flag?: string,
): Promise<unknown> {
  const named = flag === undefined ? path : `${flag} ${path}`
  let first: string
  try {
    // @note Opening a FIFO would wait for a writer forever, past Ctrl-C
    // too (the exit waits for the blocked open), and /dev/zero has no end.
    if (!(await stat(path)).isFile()) {
      throw new SessionFileError(
        `cannot read ${named}: it is not a regular file. Give the path of a session file.`,
      )
    }
    const handle = await open(path)
    try {
      const buffer = Buffer.alloc(4096)
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
      first = buffer.subarray(0, bytesRead).toString('utf8')
    } finally {
      await handle.close()
    }
  } catch (error) {
    if (error instanceof SessionFileError) throw error
    throw new SessionFileError(
      `cannot read ${named}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    )
  }
  if (!first.includes(`"format":"${RECORDING_FORMAT}"`))
    return readWholeJson(named, path)
  const lines = createInterface({
    input: createReadStream(path, 'utf8'),
    crlfDelay: Infinity,
  })
  let header: RecordingHeader | undefined
  const exchanges: RecordedExchange[] = []
  let torn = 0
  for await (const line of lines) {
    if (line.trim() === '') continue
    const value = asObject(line)
    if (!header) {
      if (value?.format !== RECORDING_FORMAT || !value.session)
        throw new SessionFileError(
          `${named}: the first line is not the header of a recording`,
        )
      header = value as unknown as RecordingHeader
      continue
    }
    // @note A line cut short by a crash is the last one: the rest is whole.
    if (value?.request && value.response)
      exchanges.push(value as unknown as RecordedExchange)
    else torn++
  }
  if (!header) throw new SessionFileError(`${named}: the recording is empty`)
  return sessionOf(header, exchanges, torn)
}

async function readWholeJson(named: string, path: string): Promise<unknown> {
  const { readFile } = await import('node:fs/promises')
  let content: string
  try {
    content = await readFile(path, 'utf8')
  } catch (error) {
    throw new SessionFileError(
      `cannot read ${named}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    )
  }
  try {
    return JSON.parse(content)
  } catch (error) {
    throw new SessionFileError(
      `${named} is not valid JSON: ${(error as Error).message}`,
    )
  }
}

const isSuccess = (exchange: RecordedExchange, path: string): boolean =>
  exchange.request.path.split('?', 1)[0] === path &&
  exchange.response.status >= 200 &&
  exchange.response.status < 300

/** Whom a record made with a credential belongs to: an account, and the key or token that made it. */
interface Maker {
  account: string
  /** The id of the API key or token, a token's `issued_by`. */
  issuer: string | undefined
  /** The credential the session holds no key for that it stands in for, as recorded. */
  unheld?: string
}

/** The credential of a recorded `Authorization` header, as recorded (masked or kept). */
const credentialOf = (exchange: RecordedExchange): string | undefined => {
  const entry = Object.entries(exchange.request.headers).find(
    ([name]) => name.toLowerCase() === 'authorization',
  )
  return entry?.[1].trim().split(/\s+/)[1] || undefined
}

/** What the credentials a recording shows stand for: see {@link recordedCredentials}. */
export interface RecordedCredentials<T> {
  /**
   * Holds `secret` (in full, or as a recording masked it) for `value`, by
   * each form a recording may show it in, unless one held before shows the
   * same way.
   */
  hold(secret: unknown, value: T): void
  /** The recording minted `token`, as recorded: from now on it stands for `value`. */
  mint(token: string, value: T): void
  /**
   * What `credential`, as recorded, stands for: a token minted before, then a
   * held secret; `undefined` for a credential of neither.
   */
  of(credential: string | undefined): { value: T; minted: boolean } | undefined
}

/**
 * Tells what each credential of a recording stands for, as recorded, in full
 * or masked: an API key of `keys`, by its secret or its masked form (the
 * first that masks the same way, an unrevoked one first: `sk_test_…0001` is
 * the demo key one's, whose mask persona keys share), or a token minted
 * earlier in the recording (the last minted with that form). `--from` gives
 * each record to the account of the credential that made it, and `verify
 * --from` replays each call with the sandbox's key or token in its place.
 *
 * @example
 * const credentials = recordedCredentials(keys, (key) => key.account_id)
 * credentials.of('sk_test_…0002') // { value: 'acct_DemoAccount002', minted: false }
 */
export function recordedCredentials<
  K extends { secret?: unknown; revoked?: boolean },
  T,
>(keys: readonly K[], valueOf: (key: K) => T): RecordedCredentials<T> {
  const held = new Map<string, T>()
  // Tokens minted in the recording, by their `token` as recorded: the latest.
  const minted = new Map<string, T>()
  const hold = (secret: unknown, value: T) => {
    if (typeof secret !== 'string') return
    // A secret the recording masked is its own masked form.
    const forms = isMaskedSecret(secret)
      ? [secret]
      : [secret, maskSecret(secret)]
    for (const form of forms) if (!held.has(form)) held.set(form, value)
  }
  for (const key of [
    ...keys.filter((k) => !k.revoked),
    ...keys.filter((k) => k.revoked),
  ])
    hold(key.secret, valueOf(key))
  return {
    hold,
    mint: (token, value) => void minted.set(token, value),
    of(credential) {
      if (credential === undefined) return undefined
      const token = minted.get(credential)
      if (token !== undefined) return { value: token, minted: true }
      const key = held.get(credential)
      return key === undefined ? undefined : { value: key, minted: false }
    },
  }
}

/**
 * Gives each API key whose secret the recording masked a new secret, in the
 * session's data and in the fixtures of its options (the key a fixture made
 * and the fixture the same one, so that a reset makes it again): a masked
 * secret can be no key's. Returns the masked forms, in order.
 */
function renewMaskedKeys(session: RecordingHeader['session']): string[] {
  const random = createCryptoRandom()
  const { prefix, length } = ID_FORMATS.apiKey
  const fresh = () => randomBase62(random, length, prefix)
  const masked: string[] = []
  // The new secrets by account and masked form, in the order of the keys.
  const renewed = new Map<string, string[]>()
  for (const key of session.data.api_keys) {
    if (typeof key.secret !== 'string' || !isMaskedSecret(key.secret)) continue
    const secret = fresh()
    const slot = `${key.account_id} ${key.secret}`
    renewed.set(slot, [...(renewed.get(slot) ?? []), secret])
    masked.push(key.secret)
    key.secret = secret
  }
  const fixtures = (
    session.options as { fixtures?: { accounts?: unknown } } | undefined
  )?.fixtures
  if (!Array.isArray(fixtures?.accounts)) return masked
  for (const account of fixtures.accounts as {
    id?: unknown
    apiKeys?: unknown
  }[]) {
    if (!Array.isArray(account?.apiKeys)) continue
    for (const key of account.apiKeys as { key?: unknown }[])
      if (typeof key?.key === 'string' && isMaskedSecret(key.key))
        key.key =
          renewed.get(`${String(account.id)} ${key.key}`)?.shift() ?? fresh()
  }
  return masked
}

/**
 * The session a recording stands for: its starting session, plus each
 * customer the service created and, when the secrets were kept, each token
 * it minted, so that a client still holding one is let in.
 *
 * Each record belongs to the account of the credential that made it (as
 * {@link recordedCredentials} tells it): an API key of the session, or a
 * token minted earlier in the recording, whose account is that of the
 * credential that minted it. What a credential the session
 * holds no key for made (the live service's own keys, and the tokens they
 * minted) belongs to the first account; their masked forms are listed under
 * `recorded.unheld_credentials`. A key the recording masked is told by its
 * masked form too, and gets a new secret; their masked forms are listed
 * under `recorded.renewed_keys`.
 */
function sessionOf(
  header: RecordingHeader,
  exchanges: RecordedExchange[],
  torn: number,
): unknown {
  const session = structuredClone(header.session)
  // @note Recordings made before wrote the default that the recorder's
  // sandbox resolved, which made every server started from one mint the
  // same secrets.
  if (session.options && typeof session.options === 'object')
    delete session.options.deterministic
  const first = session.data.accounts[0]?.id
  const keys = session.data.api_keys
  const credentials = recordedCredentials<(typeof keys)[number], Maker>(
    keys,
    (key) => ({ account: key.account_id, issuer: key.id }),
  )
  // @note After the keys are held: a masked key is told by its masked form.
  const renewed = renewMaskedKeys(session)
  for (const token of session.data.tokens)
    credentials.hold(token.secret, {
      account: String(token.account_id),
      issuer: String(token.id),
    })
  const unheld = new Set<string>()
  const makerOf = (exchange: RecordedExchange): Maker | undefined => {
    const credential = credentialOf(exchange)
    const maker = credentials.of(credential)?.value
    if (maker) return maker
    if (first === undefined) return undefined
    return {
      account: first,
      issuer: keys.find((k) => k.account_id === first)?.id,
      unheld: credential ?? '(no Authorization)',
    }
  }
  const known = new Set(session.data.customers.map((c) => c.id))
  const tokens = new Set(session.data.tokens.map((t) => t.id))
  for (const exchange of exchanges) {
    const body = asObject(exchange.response.body)
    if (!body || typeof body.id !== 'string') continue
    const customer = isSuccess(exchange, '/v1/customers')
    const token =
      isSuccess(exchange, '/v2/tokens') && typeof body.token === 'string'
    if (!customer && !token) continue
    const maker = makerOf(exchange)
    if (!maker) continue
    if (token)
      credentials.mint(body.token as string, { ...maker, issuer: body.id })
    if (customer && !known.has(body.id)) {
      known.add(body.id)
      if (maker.unheld !== undefined) unheld.add(maker.unheld)
      session.data.customers.push({
        id: body.id,
        account_id: maker.account,
        ...(typeof body.name === 'string' && { name: body.name }),
        ...(typeof body.email === 'string' && { email: body.email }),
        created_at: exchange.at,
      })
    }
    if (
      token &&
      header.keep_secrets &&
      maker.issuer !== undefined &&
      !tokens.has(body.id)
    ) {
      tokens.add(body.id)
      if (maker.unheld !== undefined) unheld.add(maker.unheld)
      const expiresIn =
        typeof body.expires_in === 'number' ? body.expires_in : 3600
      session.data.tokens.push({
        id: body.id,
        account_id: maker.account,
        secret: body.token,
        scopes: Array.isArray(body.scopes) ? body.scopes : [],
        expires_in: expiresIn,
        expires_at:
          typeof body.expires_at === 'string'
            ? body.expires_at
            : new Date(
                Date.parse(exchange.at) + expiresIn * 1000,
              ).toISOString(),
        created_at:
          typeof body.created_at === 'string' ? body.created_at : exchange.at,
        issued_by: maker.issuer,
      })
    }
  }
  return {
    ...session,
    recorded: {
      target: header.target,
      exchanges,
      ...(torn > 0 && { torn_lines: torn }),
      ...(unheld.size > 0 && { unheld_credentials: [...unheld] }),
      ...(renewed.length > 0 && { renewed_keys: renewed }),
    },
  }
}
