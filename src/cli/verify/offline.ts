// verify --from: grades the assumptions from a recorded session, sending nothing.
import { DEMO_KEY_ONE } from '../../../fixtures/demo-keys.ts'
import { LEDGER } from '../../assumptions.ts'
import {
  asObject,
  recordedCredentials,
  type RecordedExchange,
} from '../../model/session-file.ts'
import { createSandboxCore } from '../../sandbox-core.ts'
import type { VerifyReport } from './index.ts'
import { sandboxOptionsOf } from './config.ts'
import { NOT_PROBED, type RowResult } from './probes.ts'
import { counted } from './report.ts'
import { OPERATION_PATHS } from './transport.ts'

const BAD_KEY = 'sk_test_VerifyProbeNotAKey00000'
// The sandbox's customer ids, as the ledger's customer.id-format row states them.
const CUSTOMER_ID = /^cus_[0-9A-Za-z]{14}$/

interface Answer {
  status: number
  headers: Headers | Record<string, string>
  body: string
}

const header = (a: Answer, name: string): string | undefined =>
  a.headers instanceof Headers
    ? (a.headers.get(name) ?? undefined)
    : a.headers[name]

/** The field a validation answer names, from `errors[]` or its text. */
function fieldOf(answer: Answer): string | undefined {
  const body = asObject(answer.body)
  const errors = body?.errors
  if (Array.isArray(errors)) {
    const field = (errors[0] as { field?: unknown } | undefined)?.field
    if (typeof field === 'string') return field
  }
  return /\b(name|email|scopes|expires_in)\b/.exec(answer.body)?.[1]
}

const FIELD_ROWS: Record<string, string> = {
  name: 'customer.name-constraints',
  email: 'customer.email-constraints',
  scopes: 'token.scope-catalog',
  expires_in: 'token.expires-in',
}

/** The ledger row one exchange speaks to, judged on both answers. */
function rowOf(
  exchange: RecordedExchange,
  sandbox: Answer,
  usedToken: boolean,
): string {
  const path = exchange.request.path
  const service = exchange.response
  const statuses = [service.status, sandbox.status]
  const customers = path === '/v1/customers'
  const has = (s: number) => statuses.includes(s)
  if (
    header(service, 'idempotent-replayed') ||
    header(sandbox, 'idempotent-replayed')
  )
    return 'idempotency'
  // A call made with a token speaks to whether that token is taken.
  if (usedToken)
    return customers ? 'auth.v1-accepts-tokens' : 'auth.token-issuers'
  if (has(429)) return 'limits.rate'
  if (has(413)) return 'limits.size'
  if (has(415)) return 'token.content-type'
  if (has(431)) return 'limits.header-count'
  if (has(409)) return 'customer.email-uniqueness'
  if (has(401) || has(403)) return 'auth.errors'
  if (customers && !has(400) && !has(415)) {
    // @note A customer sent without one of its fields speaks to which fields
    // are required, whether the service took it or named the missing field.
    const body = asObject(exchange.request.body)
    if (body && (!('name' in body) || !('email' in body)))
      return 'customer.required-fields'
  }
  const failed = sandbox.status >= 400 ? sandbox : service
  if (failed.status === 422 || failed.status === 400) {
    const field = fieldOf(failed)
    if (field && FIELD_ROWS[field]) return FIELD_ROWS[field]
    const body = asObject(exchange.request.body) ?? {}
    const known = customers ? ['name', 'email'] : ['scopes', 'expires_in']
    if (Object.keys(body).some((k) => !known.includes(k)))
      return 'request.unknown-fields'
    if (customers) return 'customer.required-fields'
    return 'token.scope-catalog'
  }
  return customers ? 'customer.success-status' : 'token.record'
}

/** How two answers to one request differ, or undefined when they agree. */
function difference(service: Answer, sandbox: Answer): string | undefined {
  if (service.status !== sandbox.status)
    return `the service answered ${service.status}, the sandbox ${sandbox.status}`
  const a = asObject(service.body)
  const b = asObject(sandbox.body)
  if (service.status < 300) {
    const ka = Object.keys(a ?? {})
      .toSorted()
      .join(', ')
    const kb = Object.keys(b ?? {})
      .toSorted()
      .join(', ')
    if (ka !== kb)
      return `the service answered { ${ka} }, the sandbox { ${kb} }`
  } else {
    const ta = (header(service, 'content-type') ?? '').split(';')[0]
    const tb = (header(sandbox, 'content-type') ?? '').split(';')[0]
    if (ta !== tb)
      return `the service's error is ${ta || 'untyped'}, the sandbox's ${tb}`
    const ca = /error="([^"]+)"/.exec(
      header(service, 'www-authenticate') ?? '',
    )?.[1]
    const cb = /error="([^"]+)"/.exec(
      header(sandbox, 'www-authenticate') ?? '',
    )?.[1]
    if (ca !== cb)
      return `WWW-Authenticate error ${ca ?? 'absent'} from the service, ${cb ?? 'absent'} from the sandbox`
  }
  const rateA = header(service, 'ratelimit-policy') !== undefined
  const rateB = header(sandbox, 'ratelimit-policy') !== undefined
  if (rateA !== rateB)
    return `RateLimit-Policy ${rateA ? 'sent' : 'not sent'} by the service, ${rateB ? 'sent' : 'not sent'} by the sandbox`
  return undefined
}

const hostOf = (target: unknown): string =>
  typeof target === 'string' && URL.canParse(target)
    ? new URL(target).host
    : 'the recorded service'

/**
 * Compares a session that `record` saved with the sandbox's own answers,
 * offline: each recorded call of the two operations is replayed, in order,
 * into a fresh sandbox configured with `config`, and each row is judged on
 * the exchanges that speak to it.
 *
 * @example
 * const report = await verifyRecorded(JSON.parse(await readFile('session.json', 'utf8')), {})
 */
export async function verifyRecorded(
  session: unknown,
  config: Record<string, unknown> = {},
): Promise<VerifyReport> {
  const recorded = (
    session as { recorded?: { target?: unknown; exchanges?: unknown } }
  )?.recorded
  if (!recorded || !Array.isArray(recorded.exchanges))
    throw new TypeError(
      'the file holds no recorded exchanges: pass a session that `customer-token-sandbox record` saved',
    )
  const exchanges = recorded.exchanges as RecordedExchange[]
  const sandboxOptions = sandboxOptionsOf(config)
  const { sandbox } = createSandboxCore({
    ...sandboxOptions,
    customersPerAccount: 0,
  })
  await sandbox.ready
  // A recorded credential → the sandbox's key that masks the same way, or the
  // token the sandbox minted in place of the recorded one: told as `--from`
  // tells them, so that each call acts for the account it acted for.
  const { accounts, api_keys: keys } = sandbox.export().data
  const credentials = recordedCredentials(keys, (key) => key.secret)
  // @note A key the sandbox holds none like (the service's own) acts for
  // the first account, where `--from` puts what it made.
  const firstKey =
    keys.find((k) => k.account_id === accounts[0]?.id && !k.revoked)?.secret ??
    keys.find((k) => !k.revoked)?.secret ??
    DEMO_KEY_ONE
  const findings = new Map<string, string[]>()
  const seen = new Map<string, number>()
  let replayed = 0
  for (const exchange of exchanges) {
    const path = exchange.request.path.split('?', 1)[0]!
    if (
      exchange.request.method !== 'POST' ||
      !(OPERATION_PATHS as readonly string[]).includes(path) ||
      exchange.response.status === 502 ||
      // Kept without its body (too large, cut short): nothing to compare.
      exchange.response.note !== undefined
    )
      continue
    // @note The recorded credential is masked (and holds "…", which no header
    // may carry): the sandbox gets one of its own in its place.
    const { authorization: auth, ...rest } = exchange.request.headers
    const headers = new Headers(rest)
    let usedToken = false
    if (auth) {
      const [scheme = 'Bearer', credential = ''] = auth.split(/\s+/)
      const held = credentials.of(credential)
      usedToken = held?.minted === true || credential.startsWith('tok_')
      const replacement = held?.minted
        ? held.value
        : exchange.response.status === 401 || usedToken
          ? BAD_KEY
          : (held?.value ?? firstKey)
      headers.set('authorization', `${scheme} ${replacement}`)
    }
    const response = await sandbox.fetch(
      new Request(`http://sandbox.test${path}`, {
        method: 'POST',
        headers,
        body: exchange.request.body,
      }),
    )
    replayed++
    const answer: Answer = {
      status: response.status,
      headers: response.headers,
      body: await response.text(),
    }
    const theirs = asObject(exchange.response.body)?.token
    const ours = asObject(answer.body)?.token
    if (typeof theirs === 'string' && typeof ours === 'string')
      credentials.mint(theirs, ours)
    if (
      path === '/v1/customers' &&
      exchange.response.status >= 200 &&
      exchange.response.status < 300
    ) {
      const id = asObject(exchange.response.body)?.id
      if (typeof id === 'string') {
        seen.set(
          'customer.id-format',
          (seen.get('customer.id-format') ?? 0) + 1,
        )
        if (!CUSTOMER_ID.test(id)) {
          const list = findings.get('customer.id-format') ?? []
          list.push(`POST ${path}: id ${JSON.stringify(id.slice(0, 40))}`)
          findings.set('customer.id-format', list)
        }
      }
    }
    const row = rowOf(exchange, answer, usedToken)
    seen.set(row, (seen.get(row) ?? 0) + 1)
    const diff = difference(exchange.response, answer)
    if (diff) {
      const list = findings.get(row) ?? []
      list.push(`POST ${path}: ${diff}`)
      findings.set(row, list)
    }
    if (exchange.response.status >= 400) {
      const typeA = (header(exchange.response, 'content-type') ?? '').split(
        ';',
      )[0]
      const shape = typeA === 'application/problem+json'
      seen.set('errors.shape', (seen.get('errors.shape') ?? 0) + 1)
      if (!shape) {
        const list = findings.get('errors.shape') ?? []
        list.push(`POST ${path}: an error as ${typeA || 'untyped'}`)
        findings.set('errors.shape', list)
      }
    }
  }
  const rows: RowResult[] = LEDGER.map((item) => {
    const count = seen.get(item.id) ?? 0
    const found = findings.get(item.id)
    if (count === 0)
      return {
        id: item.id,
        verdict: 'unknown',
        expected: item.default,
        observed:
          NOT_PROBED[item.id] ?? 'no recorded exchange speaks to this row',
      }
    return {
      id: item.id,
      verdict: found ? 'differs' : 'matches',
      expected: item.default,
      observed: found
        ? `${found.length} of ${counted(count, 'recorded exchange')} ${found.length === 1 ? 'differs' : 'differ'}; first: ${found[0]}`
        : `${counted(count, 'recorded exchange')} ${count === 1 ? 'agrees' : 'agree'}`,
    }
  })
  const tally = (v: string) => rows.filter((r) => r.verdict === v).length
  return {
    target: `${String(recorded.target ?? 'a recorded session')} (recorded, ${replayed} exchanges replayed offline)`,
    rows,
    summary: {
      matches: tally('matches'),
      differs: tally('differs'),
      unknown: tally('unknown'),
    },
    coverage: {
      probed: rows.filter((r) => r.verdict !== 'unknown').length,
      observable:
        LEDGER.length -
        Object.values(NOT_PROBED).filter((why) =>
          /^(no observable effect|not applicable)/.test(why),
        ).length,
    },
    requests: 0,
    creates: 0,
    host: hostOf(recorded.target),
    offline: { exchanges: replayed },
    ...(rows.every((row) => row.verdict === 'unknown') && {
      nothingCompared:
        replayed === 0
          ? `the session holds no recorded exchange of POST ${OPERATION_PATHS.join(' or POST ')} to replay`
          : 'no recorded exchange speaks to a row of the ledger',
    }),
    tag: 'none (offline)',
    config,
    log: [],
  }
}
