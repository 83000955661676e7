// verify's probes: the requests that tell each assumption's value on a live service.
import {
  ProbeStopped,
  type OperationPath,
  type Prober,
  type ProbeRequest,
  type ProbeResponse,
} from './transport.ts'

/** How much of a refusal verify reads for the scopes a service names. */
const SCOPE_NAMES_READ = 4096
/** The most scopes named in a refusal that verify mints a token with. */
const MAX_SCOPES_NAMED = 50

/** What the sandbox, as configured, is expected to do: the options a probe checks. */
export interface Expectations {
  requiredFields: readonly ('name' | 'email')[]
  nameLength: { min: number; max: number }
  emailMaxLength: number
  uniqueEmail: boolean
  unknownFields: 'reject' | 'ignore'
  scopes: readonly string[]
  expiresIn: { default: number; min: number; max: number }
  v1AcceptsTokens: boolean
  tokenIssuers: 'api-keys' | 'api-keys-and-tokens'
  rateLimit: { limit: number; windowSeconds: number } | false
  maxBodyBytes: number
  /** Problem JSON unless a JavaScript `errorFormat` replaced it. */
  errorFormat: 'problemJson' | 'custom'
  keepAliveTimeout: number
  maxHeadersCount: number
}

/** The outcome for one ledger row. */
export type Verdict = 'matches' | 'differs' | 'unknown'

/** One row of the report. */
export interface RowResult {
  id: string
  verdict: Verdict
  /** What the sandbox does, as configured. */
  expected: string
  /** What the service did, or why it is unknown. */
  observed: string
  /** Options (the JavaScript and `--config` names) that make the sandbox do what was observed. */
  config?: Record<string, unknown>
  /** Set when no option can make the sandbox do what the service does. */
  inexpressible?: string
}

/** What probes share: the prober, the expectations and answers seen so far. */
export interface ProbeContext {
  prober: Prober
  /** The API key, for the probes that write the header themselves. */
  key: string
  expect: Expectations
  /** Every answer so far, for rows judged on all of them (error shape, rate limits). */
  answers: ProbeResponse[]
  /** Values one probe group found that another needs. */
  found: {
    customer?: { id: string; name: string; email: string }
    readToken?: string
    expiresMin?: number
    tokenRecord?: Record<string, unknown>
    tokenUsable?: boolean
    /** The status of a request refused for its fields alone. */
    validationStatus?: number
  }
  counter: number
}

/** A probe group: the ledger row it checks and how. */
export interface ProbeGroup {
  id: string
  /** Set when the group sends nothing and judges the answers seen so far. */
  passive?: boolean
  run(ctx: ProbeContext): Promise<Omit<RowResult, 'id'>>
}

/** A row judged on earlier answers when there are none: nothing to say. */
const nothingSeen = (_ctx: ProbeContext, id: string) => ({
  verdict: 'unknown' as const,
  expected: id,
  observed: 'no answer of the service to judge it by',
})

const ok = (r: ProbeResponse): boolean => r.status >= 200 && r.status < 300

/**
 * Sends one probe and refuses answers that say nothing about the row: a
 * server error, a rate limit or a body that is not JSON end the row as unknown.
 */
async function send(
  ctx: ProbeContext,
  request: ProbeRequest,
): Promise<ProbeResponse> {
  const response = await ctx.prober.send(request)
  // @note Only answers that speak for the service are judged: a 429 does
  // (its headers tell the limit), a 5xx or an HTML page does not.
  if (response.status === 429) ctx.answers.push(response)
  if (response.status >= 500)
    throw new ProbeStopped(
      `the service answered ${response.status} to "${request.purpose}"`,
      'network',
    )
  if (response.status === 429)
    throw new ProbeStopped(
      `the service answered 429 (rate limited) to "${request.purpose}"; lower --rate`,
      'network',
    )
  if (response.json === undefined && response.text.trim() !== '') {
    const type = response.headers['content-type'] ?? 'no Content-Type'
    throw new ProbeStopped(
      `the service answered ${response.status} with ${type.split(';')[0]}, ${response.unread ? `${response.unread}, which verify does not read` : 'not JSON'}, to "${request.purpose}"`,
      'network',
    )
  }
  ctx.answers.push(response)
  return response
}

/** A unique, tagged email of `length` characters, padded with domain labels. */
function emailOf(ctx: ProbeContext, length?: number): string {
  let local = `${ctx.prober.tag}.${++ctx.counter}`
  const labels: string[] = []
  let extra = length === undefined ? 0 : length - `${local}@example.com`.length
  // Labels of at most 63 characters, as DNS allows.
  while (extra > 0) {
    if (extra >= 64) {
      labels.push('d'.repeat(63))
      extra -= 64
    } else if (extra >= 2) {
      labels.push('d'.repeat(extra - 1))
      extra = 0
    } else {
      local += 'l'
      extra = 0
    }
  }
  return `${local}@${[...labels, 'example.com'].join('.')}`
}

/** A name of `length` code points, starting with the run's tag when it fits. */
function nameOf(ctx: ProbeContext, length = 24): string {
  const tag = `${ctx.prober.tag} probe `
  if (length >= tag.length) return tag + 'x'.repeat(length - tag.length)
  return 'x'.repeat(length)
}

const numbersIn = (text: string): number[] =>
  [...new Set((text.match(/\d+/g) ?? []).map(Number))].filter(
    (n) => Number.isSafeInteger(n) && n > 0,
  )

/** Whether a value is accepted; answers are cached so no probe is sent twice. */
type Accepts = (n: number) => Promise<boolean>

const memo = (accepts: Accepts): Accepts => {
  const seen = new Map<number, boolean>()
  return async (n) => {
    if (!seen.has(n)) {
      const result = await accepts(n)
      seen.set(n, result)
    }
    return seen.get(n)!
  }
}

/**
 * The largest accepted value in [lo, hi]: the expected one first, then the
 * numbers the service's own error texts mention, then a binary search.
 * Undefined when even `hi` is accepted.
 */
async function findMax(
  accepts: Accepts,
  expected: number,
  hints: number[],
  lo: number,
  hi: number,
): Promise<number | undefined> {
  for (const n of [expected, ...hints.toSorted((a, b) => b - a)]) {
    if (n < lo || n > hi) continue
    if ((await accepts(n)) && !(await accepts(n + 1))) return n
  }
  if (await accepts(hi)) return undefined
  let low = lo // assumed accepted
  let high = hi // rejected
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2)
    if (await accepts(mid)) low = mid
    else high = mid
  }
  return low
}

/** The smallest accepted value in [lo, hi], like `findMax`. */
async function findMin(
  accepts: Accepts,
  expected: number,
  hints: number[],
  lo: number,
  hi: number,
): Promise<number> {
  for (const n of [expected, ...hints.toSorted((a, b) => a - b)]) {
    if (n < lo || n > hi) continue
    if ((await accepts(n)) && (n === lo || !(await accepts(n - 1)))) return n
  }
  if (await accepts(lo)) return lo
  let low = lo // rejected
  let high = hi // assumed accepted
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2)
    if (await accepts(mid)) high = mid
    else low = mid
  }
  return high
}

/** Collects the numbers of the service's rejections, to try as bounds. */
const hinting = (
  hints: number[],
  accepts: (n: number) => Promise<ProbeResponse>,
): Accepts =>
  memo(async (n) => {
    const response = await accepts(n)
    if (!ok(response)) hints.push(...numbersIn(response.text))
    return ok(response)
  })

const describe = (r: ProbeResponse): string => {
  const body = r.json as Record<string, unknown> | undefined
  const code =
    body && typeof body === 'object'
      ? (body.code ?? body.error ?? body.type)
      : undefined
  return `${r.status}${typeof code === 'string' ? ` ${code}` : ''}`
}

const createCustomer = (
  ctx: ProbeContext,
  body: unknown,
  purpose: string,
  headers?: Record<string, string>,
): Promise<ProbeResponse> =>
  send(ctx, {
    path: '/v1/customers',
    body,
    creates: true,
    purpose,
    ...(headers && { headers }),
  })

const createToken = async (
  ctx: ProbeContext,
  body: unknown,
  purpose: string,
  headers?: Record<string, string>,
): Promise<ProbeResponse> => {
  const response = await send(ctx, {
    path: '/v2/tokens',
    body,
    creates: true,
    purpose,
    ...(headers && { headers }),
  })
  const token = (response.json as { token?: unknown } | undefined)?.token
  if (typeof token === 'string') ctx.prober.addSecret(token)
  return response
}

const tokenOf = (r: ProbeResponse): string | undefined => {
  const token = (r.json as { token?: unknown } | undefined)?.token
  return ok(r) && typeof token === 'string' ? token : undefined
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/**
 * Mints a token with `scopes` for a probe that needs one; when the service
 * mints none, the probe's row is `unknown`, saying what came back instead.
 */
async function mintForProbe(
  ctx: ProbeContext,
  scopes: string[],
  expected: string,
): Promise<{ token: string } | { unknown: Omit<RowResult, 'id'> }> {
  const what = scopes[0]
  const minted = await createToken(ctx, { scopes }, `mint a ${what} token`)
  const token = tokenOf(minted)
  if (token) return { token }
  return {
    unknown: {
      verdict: 'unknown',
      expected,
      observed: `no ${what} token could be minted (${describe(minted)})`,
    },
  }
}

const range = (b: { min: number; max: number }) => `${b.min}–${b.max}`

const keysOf = (value: unknown): string[] =>
  value && typeof value === 'object' && !Array.isArray(value)
    ? Object.keys(value).toSorted()
    : []

/** A valid customer, created once and shared by the rows that need one. */
async function baseCustomer(
  ctx: ProbeContext,
): Promise<{ response: ProbeResponse; body: { name: string; email: string } }> {
  const body = { name: nameOf(ctx), email: emailOf(ctx) }
  const response = await createCustomer(ctx, body, 'create a valid customer')
  const json = response.json as Record<string, unknown>
  if (ok(response) && typeof json?.id === 'string')
    ctx.found.customer = { id: json.id, ...body }
  return { response, body }
}

/** A token with `customers:read`, minted once and shared. */
async function readToken(ctx: ProbeContext): Promise<string | undefined> {
  if (ctx.found.readToken) return ctx.found.readToken
  const response = await createToken(
    ctx,
    { scopes: ['customers:read'] },
    'mint a customers:read token without expires_in',
  )
  if (ok(response) && response.json && typeof response.json === 'object')
    ctx.found.tokenRecord = response.json as Record<string, unknown>
  ctx.found.readToken = tokenOf(response)
  return ctx.found.readToken
}

const CUSTOMER_KEYS = ['email', 'id', 'name']
const TOKEN_KEYS = [
  'created_at',
  'expires_at',
  'expires_in',
  'id',
  'scopes',
  'token',
  'token_type',
]

/** The probe groups, one per ledger row with an effect the two operations show. */
export const PROBES: readonly ProbeGroup[] = [
  {
    id: 'customer.success-status',
    async run(ctx) {
      const { response, body } = await baseCustomer(ctx)
      const expected = '201 with exactly { id, name, email }, echoed as sent'
      if (!ok(response))
        return {
          verdict: 'unknown',
          expected,
          observed: `a valid customer was refused: ${describe(response)}`,
        }
      const json = response.json as Record<string, unknown>
      const keys = keysOf(json)
      const echoed = json.name === body.name && json.email === body.email
      const same =
        response.status === 201 &&
        keys.join() === CUSTOMER_KEYS.join() &&
        echoed
      return {
        verdict: same ? 'matches' : 'differs',
        expected,
        observed: `${response.status} with { ${keys.join(', ')} }${echoed ? '' : ', not echoed as sent'}`,
        ...(!same && {
          inexpressible:
            'no option changes the success status or the customer shape',
        }),
      }
    },
  },
  {
    id: 'customer.id-format',
    async run(ctx) {
      if (!ctx.found.customer) await baseCustomer(ctx)
      const expected = '`cus_` and 14 base62 characters'
      const id = ctx.found.customer?.id
      if (id === undefined)
        return {
          verdict: 'unknown',
          expected,
          observed: 'no customer was created',
        }
      const same = /^cus_[0-9A-Za-z]{14}$/.test(id)
      return {
        verdict: same ? 'matches' : 'differs',
        expected,
        observed: `id ${JSON.stringify(id.slice(0, 40))}`,
        ...(!same && { inexpressible: 'no option changes the id format' }),
      }
    },
  },
  {
    id: 'customer.required-fields',
    async run(ctx) {
      const required: ('name' | 'email')[] = []
      const withoutName = await createCustomer(
        ctx,
        { email: emailOf(ctx) },
        'create a customer without name',
      )
      if (!ok(withoutName)) required.push('name')
      const withoutEmail = await createCustomer(
        ctx,
        { name: nameOf(ctx) },
        'create a customer without email',
      )
      if (!ok(withoutEmail)) required.push('email')
      const want = [...ctx.expect.requiredFields].toSorted().join(', ')
      const got = required.toSorted().join(', ')
      return {
        verdict: want === got ? 'matches' : 'differs',
        expected: `required: ${want || 'none'}`,
        observed: `required: ${got || 'none'} (without name ${describe(withoutName)}, without email ${describe(withoutEmail)})`,
        config: { requiredFields: required },
      }
    },
  },
  {
    id: 'customer.name-constraints',
    async run(ctx) {
      const hints: number[] = []
      const accepts = hinting(hints, (n) =>
        createCustomer(
          ctx,
          { name: nameOf(ctx, n), email: emailOf(ctx) },
          `create a customer with a ${n}-character name`,
        ),
      )
      const want = ctx.expect.nameLength
      const max = await findMax(accepts, want.max, hints, 1, 100_000)
      if (max === undefined)
        return {
          verdict: 'differs',
          expected: `name of ${range(want)} characters`,
          observed: 'a name of 100000 characters was accepted',
          inexpressible: 'names are bounded in the sandbox',
        }
      const min = await findMin(accepts, want.min, hints, 0, max)
      const same = min === want.min && max === want.max
      return {
        verdict: same ? 'matches' : 'differs',
        expected: `name of ${range(want)} characters`,
        observed: `name of ${min}–${max} characters accepted`,
        config: { nameLength: { min, max } },
      }
    },
  },
  {
    id: 'customer.email-constraints',
    async run(ctx) {
      const hints: number[] = []
      const accepts = hinting(hints, (n) =>
        createCustomer(
          ctx,
          { name: nameOf(ctx), email: emailOf(ctx, n) },
          `create a customer with a ${n}-character email`,
        ),
      )
      const want = ctx.expect.emailMaxLength
      const format = await createCustomer(
        ctx,
        { name: nameOf(ctx), email: 'not-an-email' },
        'create a customer with an email that is not an address',
      )
      const max = await findMax(accepts, want, hints, 30, 10_000)
      const formatChecked = !ok(format)
      const same = max === want && formatChecked
      return {
        verdict: same ? 'matches' : 'differs',
        expected: `an address of at most ${want} characters`,
        observed: `${max === undefined ? 'no length limit found up to 10000' : `at most ${max} characters`}; "not-an-email" ${formatChecked ? 'refused' : 'accepted'}`,
        ...(max !== undefined && { config: { emailMaxLength: max } }),
        ...(!formatChecked && {
          inexpressible: 'the sandbox always checks the address syntax',
        }),
      }
    },
  },
  {
    id: 'customer.email-uniqueness',
    async run(ctx) {
      const expected = ctx.expect.uniqueEmail
        ? 'a duplicate email is 409'
        : 'duplicates allowed'
      const first = ctx.found.customer ?? (await baseCustomer(ctx)).body
      const second = await createCustomer(
        ctx,
        { name: nameOf(ctx), email: first.email },
        'create a second customer with the same email',
      )
      const unique = !ok(second)
      return {
        verdict: unique === ctx.expect.uniqueEmail ? 'matches' : 'differs',
        expected,
        observed: unique
          ? `a duplicate email is ${describe(second)}`
          : 'duplicates allowed',
        config: { uniqueEmail: unique },
        ...(unique &&
          second.status !== 409 && {
            inexpressible: `the sandbox answers 409, the service ${second.status}`,
          }),
      }
    },
  },
  {
    id: 'request.unknown-fields',
    async run(ctx) {
      const response = await createCustomer(
        ctx,
        { name: nameOf(ctx), email: emailOf(ctx), nickname: 'probe' },
        'create a customer with an unknown field',
      )
      const observed = ok(response) ? 'ignore' : 'reject'
      return {
        verdict: observed === ctx.expect.unknownFields ? 'matches' : 'differs',
        expected: ctx.expect.unknownFields,
        observed: `${observed} (${describe(response)})`,
        config: { unknownFields: observed },
        ...(ok(response) &&
          'nickname' in (response.json as object) && {
            inexpressible: 'the service echoes the unknown field',
          }),
      }
    },
  },
  {
    id: 'token.record',
    async run(ctx) {
      await readToken(ctx)
      const record = ctx.found.tokenRecord
      const expected = `201 with { ${TOKEN_KEYS.join(', ')} }, token_type Bearer, Cache-Control: no-store`
      const answer = ctx.answers.at(-1)!
      if (!record)
        return {
          verdict: 'unknown',
          expected,
          observed: `a valid token request was refused: ${describe(answer)}`,
        }
      const keys = keysOf(record)
      const same =
        answer.status === 201 &&
        keys.join() === TOKEN_KEYS.join() &&
        record.token_type === 'Bearer' &&
        /no-store/.test(answer.headers['cache-control'] ?? '')
      return {
        verdict: same ? 'matches' : 'differs',
        expected,
        observed: `${answer.status} with { ${keys.join(', ')} }, token_type ${JSON.stringify(record.token_type)}, Cache-Control ${answer.headers['cache-control'] ?? 'absent'}`,
        ...(!same && {
          inexpressible: 'no option changes the token record',
        }),
      }
    },
  },
  {
    id: 'time.range',
    async run(ctx) {
      await readToken(ctx)
      const record = ctx.found.tokenRecord
      const expected = 'ISO-8601 UTC with milliseconds'
      if (!record)
        return {
          verdict: 'unknown',
          expected,
          observed: 'no token record to read',
        }
      const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
      const same =
        iso.test(String(record.created_at)) &&
        iso.test(String(record.expires_at))
      return {
        verdict: same ? 'matches' : 'differs',
        expected,
        observed: `created_at ${JSON.stringify(record.created_at)}, expires_at ${JSON.stringify(record.expires_at)}`,
        ...(!same && { inexpressible: 'no option changes timestamps' }),
      }
    },
  },
  {
    id: 'token.expires-in',
    async run(ctx) {
      await readToken(ctx)
      const want = ctx.expect.expiresIn
      const given = ctx.found.tokenRecord?.expires_in
      const dflt = typeof given === 'number' ? given : undefined
      const hints: number[] = []
      const accepts = hinting(hints, (n) =>
        createToken(
          ctx,
          { scopes: ['customers:read'], expires_in: n },
          `mint a token with expires_in ${n}`,
        ),
      )
      const max = await findMax(accepts, want.max, hints, 1, 10 ** 9)
      const min = await findMin(accepts, want.min, hints, 1, max ?? 10 ** 9)
      ctx.found.expiresMin = min
      const fraction = await createToken(
        ctx,
        { scopes: ['customers:read'], expires_in: min + 0.5 },
        'mint a token with a fractional expires_in',
      )
      const observedText = `default ${dflt ?? 'not returned'}, ${min}–${max ?? 'no limit up to 10^9'}, a fraction ${ok(fraction) ? 'accepted' : 'refused'}`
      const same =
        dflt === want.default &&
        min === want.min &&
        max === want.max &&
        !ok(fraction)
      const config =
        dflt !== undefined && max !== undefined
          ? { expiresIn: { default: dflt, min, max } }
          : undefined
      return {
        verdict: same ? 'matches' : 'differs',
        expected: `default ${want.default}, ${range(want)}, whole seconds`,
        observed: observedText,
        ...(config && { config }),
        ...(ok(fraction) && {
          inexpressible: 'the sandbox always refuses fractions',
        }),
      }
    },
  },
  {
    id: 'token.scope-catalog',
    async run(ctx) {
      const want = ctx.expect.scopes
      const all = await createToken(
        ctx,
        { scopes: [...want] },
        'mint a token with every scope of the catalog',
      )
      let accepted: string[]
      if (ok(all)) accepted = [...want]
      else {
        accepted = []
        for (const scope of want) {
          const one = await createToken(
            ctx,
            { scopes: [scope] },
            `mint a token with ${scope}`,
          )
          if (ok(one)) accepted.push(scope)
        }
      }
      const unknown = await createToken(
        ctx,
        { scopes: ['verifyprobe:none'] },
        'mint a token with an unknown scope',
      )
      const malformed = await createToken(
        ctx,
        { scopes: ['notascope'] },
        'mint a token with a malformed scope',
      )
      const duplicate = await createToken(
        ctx,
        { scopes: [accepted[0] ?? want[0], accepted[0] ?? want[0]] },
        'mint a token with a duplicated scope',
      )
      // The service's own list, when its refusal names one, is confirmed by a mint.
      // @note Read in the refusal's first characters only, where a service
      // names its scopes: the pattern starts again at each word boundary,
      // and over a crafted answer of `a-a-a-…` (up to --max-body) it ran
      // for hours, deaf to Ctrl-C and --timeout.
      const named = [
        ...new Set(
          unknown.text
            .slice(0, SCOPE_NAMES_READ)
            .match(/\b[a-z][\w-]*:[a-z][\w-]*\b/g) ?? [],
        ),
      ]
        .filter((s) => s !== 'verifyprobe:none' && !accepted.includes(s))
        .slice(0, MAX_SCOPES_NAMED)
      if (named.length > 0) {
        const extra = await createToken(
          ctx,
          { scopes: [...accepted, ...named] },
          'mint a token with the scopes the service named',
        )
        if (ok(extra)) accepted.push(...named)
      }
      const refusals = [unknown, malformed, duplicate].every((r) => !ok(r))
      const same =
        accepted.toSorted().join() === [...want].toSorted().join() && refusals
      return {
        verdict: same ? 'matches' : 'differs',
        expected: `catalog ${want.join(', ')}; unknown, malformed and duplicated scopes refused`,
        observed: `accepted ${accepted.join(', ') || 'none'}; unknown ${describe(unknown)}, malformed ${describe(malformed)}, duplicated ${describe(duplicate)}`,
        ...(accepted.length > 0 && { config: { scopes: accepted } }),
        ...(!refusals && {
          inexpressible:
            'the sandbox always refuses unknown, malformed and duplicated scopes',
        }),
      }
    },
  },
  {
    id: 'auth.v1-accepts-tokens',
    async run(ctx) {
      const expected = ctx.expect.v1AcceptsTokens ? 'yes' : 'no'
      const minted = await mintForProbe(ctx, ['customers:write'], expected)
      if ('unknown' in minted) return minted.unknown
      const { token } = minted
      const used = await createCustomer(
        ctx,
        { name: nameOf(ctx), email: emailOf(ctx) },
        'create a customer with the token',
        bearer(token),
      )
      if (ok(used)) ctx.found.tokenUsable = true
      return {
        verdict:
          ok(used) === ctx.expect.v1AcceptsTokens ? 'matches' : 'differs',
        expected,
        observed: ok(used) ? 'yes' : `no (${describe(used)})`,
        config: { v1AcceptsTokens: ok(used) },
      }
    },
  },
  {
    id: 'auth.token-issuers',
    async run(ctx) {
      const expected = ctx.expect.tokenIssuers
      const minted = await mintForProbe(
        ctx,
        ['tokens:write', 'customers:read'],
        expected,
      )
      if ('unknown' in minted) return minted.unknown
      const { token } = minted
      const child = await createToken(
        ctx,
        {
          scopes: ['customers:read'],
          expires_in: ctx.found.expiresMin ?? ctx.expect.expiresIn.min,
        },
        'mint a token with that token',
        bearer(token),
      )
      if (ok(child)) ctx.found.tokenUsable = true
      const observed = ok(child) ? 'api-keys-and-tokens' : 'api-keys'
      return {
        verdict: observed === expected ? 'matches' : 'differs',
        expected,
        observed: `${observed} (${describe(child)})`,
        config: { tokenIssuers: observed },
      }
    },
  },
  {
    id: 'auth.errors',
    async run(ctx) {
      const expected =
        '401 with Bearer challenge, error="invalid_token" for a bad key; 403 error="insufficient_scope"'
      const missing = await send(ctx, {
        path: '/v1/customers',
        body: { email: 'not-an-email' },
        headers: { authorization: '' },
        purpose: 'no Authorization header',
      })
      const invalid = await send(ctx, {
        path: '/v1/customers',
        body: { email: 'not-an-email' },
        headers: { authorization: 'Bearer sk_test_VerifyProbeNotAKey00000' },
        purpose: 'an unknown key',
      })
      const token = await readToken(ctx)
      const scoped = token
        ? await createToken(
            ctx,
            { scopes: ['customers:read'] },
            'mint a token with a token that lacks tokens:write',
            bearer(token),
          )
        : undefined
      // A 403 means the token was recognised: presented as Bearer, it works.
      if (scoped?.status === 403) ctx.found.tokenUsable ??= true
      const challenge = (r: ProbeResponse) =>
        r.headers['www-authenticate'] ?? 'no WWW-Authenticate'
      const parts = [
        `missing ${missing.status} ${challenge(missing)}`,
        `invalid ${invalid.status} ${challenge(invalid)}`,
        scoped
          ? `lacking scope ${scoped.status} ${challenge(scoped)}`
          : 'lacking scope: no token to try',
      ]
      const same =
        missing.status === 401 &&
        /^bearer/i.test(challenge(missing)) &&
        invalid.status === 401 &&
        /error="invalid_token"/.test(challenge(invalid)) &&
        (scoped === undefined ||
          (scoped.status === 403 &&
            /error="insufficient_scope"/.test(challenge(scoped))))
      return {
        verdict: same ? (scoped ? 'matches' : 'unknown') : 'differs',
        expected,
        observed: parts.join('; '),
        ...(!same && {
          inexpressible: 'no option changes the authentication answers',
        }),
      }
    },
  },
  {
    id: 'auth.token-presentation',
    async run(ctx) {
      const expected =
        'Authorization: Bearer <token>; the scheme is case-insensitive'
      const lower = await send(ctx, {
        path: '/v1/customers',
        body: { email: 'not-an-email' },
        headers: { authorization: `bearer ${ctx.key}` },
        purpose: 'a lower-case "bearer" with an invalid body (never stored)',
      })
      const caseInsensitive = lower.status !== 401
      if (caseInsensitive) ctx.found.validationStatus = lower.status
      const usable = ctx.found.tokenUsable
      const same = caseInsensitive && usable !== false
      return {
        verdict:
          usable === undefined && same
            ? 'unknown'
            : same
              ? 'matches'
              : 'differs',
        expected,
        observed: `lower-case scheme ${caseInsensitive ? 'accepted' : `refused (${describe(lower)})`}; a token as Bearer ${usable ? 'accepted' : 'not seen accepted'}`,
        ...(!caseInsensitive && {
          inexpressible: 'the sandbox always takes the scheme in any case',
        }),
      }
    },
  },
  {
    id: 'token.content-type',
    async run(ctx) {
      const body = JSON.stringify({ scopes: ['customers:read'] })
      const none = await createToken(
        ctx,
        body,
        'mint a token with no Content-Type',
        {
          'content-type': '',
        },
      )
      const text = await createToken(
        ctx,
        body,
        'mint a token with text/plain',
        {
          'content-type': 'text/plain',
        },
      )
      const form = await createToken(
        ctx,
        body,
        'mint a token with a form Content-Type',
        { 'content-type': 'application/x-www-form-urlencoded' },
      )
      const customer = await send(ctx, {
        path: '/v1/customers',
        body: JSON.stringify({ email: 'not-an-email' }),
        headers: { 'content-type': 'text/plain' },
        creates: true,
        purpose: 'create a customer with text/plain (an invalid body)',
      })
      const same =
        ok(none) && ok(text) && form.status === 415 && customer.status === 415
      return {
        verdict: same ? 'matches' : 'differs',
        expected:
          'tokens: none, JSON or text/plain read, a form type 415; customers: JSON only, else 415',
        observed: `tokens: none ${describe(none)}, text/plain ${describe(text)}, form ${describe(form)}; customers text/plain ${describe(customer)}`,
        ...(!same && { inexpressible: 'no option changes the content types' }),
      }
    },
  },
  {
    id: 'idempotency',
    async run(ctx) {
      const body = { name: nameOf(ctx), email: emailOf(ctx) }
      const key = `${ctx.prober.tag}-idempotency`
      const first = await createCustomer(
        ctx,
        body,
        'create with an Idempotency-Key',
        {
          'idempotency-key': key,
        },
      )
      const again = await createCustomer(
        ctx,
        body,
        'repeat it with the same key',
        {
          'idempotency-key': key,
        },
      )
      const firstId = (first.json as { id?: unknown })?.id
      const againId = (again.json as { id?: unknown })?.id
      const replayed =
        ok(first) && ok(again) && firstId !== undefined && firstId === againId
      const flagged = again.headers['idempotent-replayed'] === 'true'
      return {
        verdict: replayed && flagged ? 'matches' : 'differs',
        expected: 'the repeat is replayed with Idempotent-Replayed: true',
        observed: replayed
          ? `replayed${flagged ? ' with Idempotent-Replayed: true' : ' without Idempotent-Replayed'}`
          : `not replayed (${describe(first)} then ${describe(again)}${firstId !== againId ? ', another id' : ''})`,
        ...(!(replayed && flagged) && {
          inexpressible: 'idempotency cannot be turned off in the sandbox',
        }),
      }
    },
  },
  {
    id: 'limits.size',
    async run(ctx) {
      const want = ctx.expect.maxBodyBytes
      const hints: number[] = []
      // An invalid email keeps every size probe from storing anything.
      const bodyOf = (bytes: number): string => {
        const head = '{"email":"not-an-email","name":"'
        return `${head}${'x'.repeat(Math.max(0, bytes - head.length - 2))}"}`
      }
      const accepts = memo(async (n) => {
        const r = await send(ctx, {
          path: '/v1/customers',
          body: bodyOf(n),
          creates: true,
          purpose: `send a ${n}-byte body (an invalid customer)`,
        })
        if (r.status === 413) hints.push(...numbersIn(r.text))
        return r.status !== 413
      })
      const max = await findMax(accepts, want, hints, 64, 64 * 1024 * 1024)
      return {
        verdict: max === want ? 'matches' : 'differs',
        expected: `bodies up to ${want} bytes, larger 413`,
        observed:
          max === undefined
            ? 'a 64 MiB body was not refused with 413'
            : `bodies up to ${max} bytes, larger 413`,
        ...(max !== undefined && { config: { maxBodyBytes: max } }),
      }
    },
  },
  {
    id: 'limits.header-count',
    async run(ctx) {
      const want = ctx.expect.maxHeadersCount
      const hints: number[] = []
      const accepts = memo(async (n) => {
        const r = await send(ctx, {
          path: '/v1/customers',
          body: { email: 'not-an-email' },
          creates: true,
          headerCount: n,
          purpose: `send ${n} header fields (an invalid customer)`,
        })
        if (r.status === 431) hints.push(...numbersIn(r.text))
        return r.status !== 431
      })
      const max = await findMax(accepts, want, hints, 8, 4096)
      return {
        verdict: max === want ? 'matches' : 'differs',
        expected: `at most ${want} header fields, more 431`,
        observed:
          max === undefined
            ? '4096 header fields were not refused with 431'
            : `at most ${max} header fields, more 431`,
        ...(max !== undefined && { config: { maxHeadersCount: max } }),
      }
    },
  },
  {
    id: 'limits.rate',
    passive: true,
    async run(ctx) {
      if (ctx.answers.length === 0) return nothingSeen(ctx, 'limits.rate')
      // Judged on every answer so far: run after the other groups.
      const want = ctx.expect.rateLimit
      const policy = ctx.answers
        .map((r) => r.headers['ratelimit-policy'])
        .find(Boolean)
      const legacy = ctx.answers
        .map((r) => r.headers['x-ratelimit-limit'])
        .find(Boolean)
      const limit = Number(/q=(\d+)/.exec(policy ?? '')?.[1] ?? legacy)
      const windowSeconds = Number(/w=(\d+)/.exec(policy ?? '')?.[1])
      const expected = want
        ? `${want.limit} per ${want.windowSeconds} s per credential`
        : 'no rate limit'
      if (!policy && !legacy)
        return {
          verdict: want ? 'differs' : 'matches',
          expected,
          observed: `no rate-limit headers on ${ctx.answers.length} answers`,
          config: { rateLimit: false },
        }
      const found =
        Number.isSafeInteger(limit) && Number.isSafeInteger(windowSeconds)
      const limited = ctx.answers.filter((r) => r.status === 429).length
      return {
        verdict:
          found &&
          want &&
          want.limit === limit &&
          want.windowSeconds === windowSeconds
            ? 'matches'
            : 'differs',
        expected,
        observed: `${
          found
            ? `${limit} per ${windowSeconds} s (RateLimit-Policy)`
            : `rate-limit headers without a window (${policy ?? legacy})`
        }${limited > 0 ? `; ${limited} probes were answered 429` : ''}`,
        ...(found && { config: { rateLimit: { limit, windowSeconds } } }),
      }
    },
  },
  {
    id: 'errors.shape',
    passive: true,
    async run(ctx) {
      if (ctx.answers.length === 0) return nothingSeen(ctx, 'errors.shape')
      const errors = ctx.answers.filter((r) => r.status >= 400)
      const expected =
        'problem JSON: application/problem+json with type, title, status, code, request_id'
      const problem = (r: ProbeResponse): boolean => {
        const body = r.json as Record<string, unknown> | undefined
        return (
          (r.headers['content-type'] ?? '').startsWith(
            'application/problem+json',
          ) &&
          !!body &&
          ['type', 'title', 'status', 'code', 'request_id'].every(
            (k) => k in body,
          )
        )
      }
      if (errors.length === 0)
        return {
          verdict: 'unknown',
          expected,
          observed: 'no error answer was seen',
        }
      const off = errors.filter((r) => !problem(r))
      const observedKind = off.length === 0 ? 'problemJson' : 'custom'
      const sample = off[0] ?? errors[0]!
      // A field error's status is fixed in the sandbox, whatever the format.
      const validation = ctx.found.validationStatus
      const statusDiffers = validation !== undefined && validation !== 422
      const inexpressible = [
        ...(observedKind === 'custom'
          ? [
              'errorFormat is a JavaScript function, so no config file can hold it: pass createSandbox({ errorFormat }) a function that renders this shape',
            ]
          : []),
        ...(statusDiffers
          ? [`a field error is always 422 in the sandbox, ${validation} here`]
          : []),
      ]
      return {
        verdict:
          observedKind === ctx.expect.errorFormat && !statusDiffers
            ? 'matches'
            : 'differs',
        expected: `${
          ctx.expect.errorFormat === 'problemJson'
            ? expected
            : 'a custom errorFormat'
        }; a field error is 422`,
        observed: `${errors.length - off.length} of ${errors.length} errors are problem JSON; e.g. ${sample.headers['content-type'] ?? 'no Content-Type'} with { ${keysOf(sample.json).join(', ')} }; a field error is ${validation ?? 'not seen'}`,
        ...(inexpressible.length > 0 && {
          inexpressible: inexpressible.join('; '),
        }),
      }
    },
  },
  {
    id: 'versioning.deprecation',
    passive: true,
    async run(ctx) {
      if (ctx.answers.length === 0)
        return nothingSeen(ctx, 'versioning.deprecation')
      const v1 = ctx.answers
      const flagged = v1.find((r) => r.headers.deprecation ?? r.headers.sunset)
      return {
        verdict: flagged ? 'differs' : 'matches',
        expected: 'no Deprecation or Sunset header',
        observed: flagged
          ? `Deprecation ${flagged.headers.deprecation ?? '-'}, Sunset ${flagged.headers.sunset ?? '-'}`
          : `none on ${v1.length} answers`,
        ...(flagged && {
          inexpressible: 'the sandbox sends no deprecation headers',
        }),
      }
    },
  },
  {
    id: 'limits.keep-alive-timeout',
    passive: true,
    async run(ctx) {
      if (ctx.answers.length === 0)
        return nothingSeen(ctx, 'limits.keep-alive-timeout')
      const want = ctx.expect.keepAliveTimeout
      const header = ctx.answers
        .map((r) => r.headers['keep-alive'])
        .find(Boolean)
      const seconds = Number(/timeout=(\d+)/.exec(header ?? '')?.[1])
      const expected = `idle connections closed after ${want / 1000} s (Keep-Alive: timeout=${Math.floor(want / 1000)})`
      if (!Number.isSafeInteger(seconds))
        return {
          verdict: 'unknown',
          expected,
          observed: 'the service does not announce it (no Keep-Alive header)',
        }
      return {
        verdict: seconds === Math.floor(want / 1000) ? 'matches' : 'differs',
        expected,
        observed: `Keep-Alive: timeout=${seconds}`,
        config: { keepAliveTimeout: seconds * 1000 },
      }
    },
  },
]

/** Ledger rows `verify` does not probe, and why. */
export const NOT_PROBED: Record<string, string> = {
  'customer.other-operations':
    'not probed: it needs calls beyond the two operations, which verify never makes',
  'limits.stores':
    'not probed: reaching 10,000 records would break --max-creates',
  'limits.headers-timeout':
    'not probed: it needs a client that stalls for 10 s or more',
  'limits.request-timeout':
    'not probed: it needs a client that stalls for 30 s or more',
  'limits.send-timeout':
    'not probed: it needs a client that stops reading for a minute or more',
  'limits.connections':
    'not probed: it needs about 1,000 open connections, which is not polite',
  states: 'not probed: seeing a token expire needs waiting out its lifetime',
  'auth.obtaining-keys':
    'no observable effect: how keys are obtained is outside the two operations',
  events: 'no observable effect through the two operations',
  'storage.durability':
    'no observable effect: durability cannot be seen from answers',
  'admin.origins': "not applicable: the sandbox's own surface",
  'admin.hosts': "not applicable: the sandbox's own surface",
}

/** Rows whose verdict another row decides. */
export const SAME_AS: Record<string, string> = {
  'limits.token-lifetime': 'token.expires-in',
}

export type { OperationPath }
