import {
  DEFAULT_ACCOUNTS,
  DEMO_KEY_ONE,
  type FixtureApiKey,
} from '../fixtures/demo-keys.ts'
import type { Assumption } from '../src/assumptions.ts'
import { STATUS_TEXT } from '../src/request/errors.ts'
import type { JournalEntry } from '../src/request/journal.ts'
import type { Persona } from '../src/model/personas.ts'
import type { SandboxState } from '../src/sandbox.ts'
import { maskSecret } from '../src/model/secrets.ts'
import { chooseMode } from './mode.ts'

const PERSIST_FLAG = 'customer-token-sandbox:playground:persist'
const STORAGE_KEY = 'customer-token-sandbox:playground'
// How often the page asks the sandbox what changed.
const POLL_MS = 500
const AUTH_CODES = new Set([
  'missing_credentials',
  'invalid_credentials',
  'token_expired',
])

const $ = <T extends Element = HTMLElement>(selector: string): T => {
  const found = document.querySelector<T>(selector)
  if (!found) throw new Error(`The page has no ${selector}`)
  return found
}

// ---------- where the data lives ----------

const mode = await chooseMode(location.href, fetch)
// The API and the surface live at `base`: '' in the page, or the server.
const base = mode.kind === 'server' ? mode.origin : ''
const sameOrigin = base === '' || base === location.origin

/** Full token secrets this page may use as credentials, by token id. */
const secrets = new Map<string, string>()
const SECRETS_KEY = `${STORAGE_KEY}:tokens:${base || 'page'}`
try {
  const kept = JSON.parse(sessionStorage.getItem(SECRETS_KEY) ?? '{}')
  for (const [id, secret] of Object.entries(kept as Record<string, string>))
    secrets.set(id, secret)
} catch {
  // Nothing kept, or storage blocked: tokens minted from now on count.
}
function rememberToken(id: string, secret: string): void {
  secrets.set(id, secret)
  try {
    sessionStorage.setItem(
      SECRETS_KEY,
      JSON.stringify(Object.fromEntries(secrets)),
    )
  } catch {
    // Storage blocked: remembered until the page closes.
  }
}

const persist = mode.kind === 'page' && readFlag()
let pageSandbox: { dump(): { tokens: { id: string; secret: string }[] } }
let restored = false
if (mode.kind === 'page') {
  // @note Loaded only in this mode: the sandbox and its seed data are most
  // of the playground's bytes, and a page showing a server needs none.
  const { startSandboxWorker } = await import('../src/runtimes/browser.ts')
  const started = await startSandboxWorker({
    persist: persist ? STORAGE_KEY : false,
    serviceWorker: {
      url: new URL('mockServiceWorker.js', document.baseURI).pathname,
    },
  }).catch((error: Error) => {
    $('#status').textContent =
      `The service worker did not start: ${error.message}`
    throw error
  })
  pageSandbox = started
  restored = started.restored
}

const PERSONA_TEXT: Record<Persona, string> = {
  'rate-limited': 'one call a minute, then 429',
  slow: 'every answer takes 2 s',
  unavailable: 'every call is a 503',
  'expired-tokens': 'mints already expired tokens',
  'read-only': 'no customers:write',
}

// ---------- helpers ----------

function readFlag(): boolean {
  try {
    return localStorage.getItem(PERSIST_FLAG) === '1'
  } catch {
    return false
  }
}

function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  text?: string,
  className?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag)
  if (text !== undefined) node.textContent = text
  if (className) node.className = className
  return node
}

/** A table row; string cells may break anywhere, so that no column pushes another off. */
function row(cells: (string | Node)[]): HTMLTableRowElement {
  const tr = element('tr')
  for (const cell of cells) {
    const td = element(
      'td',
      undefined,
      typeof cell === 'string' ? 'breakable' : '',
    )
    td.append(cell)
    tr.append(td)
  }
  return tr
}

/** Text with `code` spans, as the assumption ledger writes it. */
function withCode(text: string): DocumentFragment {
  const fragment = document.createDocumentFragment()
  text.split('`').forEach((part, i) => {
    if (part === '') return
    fragment.append(i % 2 ? element('code', part) : part)
  })
  return fragment
}

function statusLabel(status: number): string {
  // The journal writes a simulated network error as status 0.
  if (status === 0) return 'network error'
  return `${status} ${STATUS_TEXT[status] ?? ''}`.trim()
}

function badgeClass(status: number): string {
  return status >= 500 || status === 0
    ? 'badge bad'
    : status >= 400
      ? 'badge warn'
      : 'badge ok'
}

const OPERATION_TEXT: Record<string, string> = {
  '*': 'either operation',
  createCustomer: 'POST /v1/customers',
  createToken: 'POST /v2/tokens',
}

/** Sends a call of the sandbox's own surface: to the server, or to the worker. */
async function surface(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  const response = await fetch(`${base}/__sandbox/${path}`, {
    method,
    cache: 'no-store',
    headers,
    ...(body !== undefined && {
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  })
  if (!response.ok && response.status !== 304) {
    const problem = (await response.json().catch(() => ({}))) as {
      detail?: string
    }
    throw new Error(
      problem.detail ?? `${method} /__sandbox/${path}: ${response.status}`,
    )
  }
  return response
}

const read = async <T>(path: string): Promise<T> =>
  (await (await surface('GET', path)).json()) as T

// ---------- credentials ----------

interface Credential {
  value: string
  label: string
}

function keyLabel(name: string, key: FixtureApiKey): string {
  if (key.revoked) return `Revoked key (always 401): ${key.key}`
  if (key.persona)
    return `Persona ${key.persona} (${PERSONA_TEXT[key.persona]}): ${key.key}`
  return `${name}: ${key.key}`
}

const documented: Credential[] = DEFAULT_ACCOUNTS.flatMap((account) =>
  account.apiKeys.map((key) => ({
    value: key.key,
    label: keyLabel(account.name, key),
  })),
)

/** A short name for a documented key, as the tables show it. */
function keyName(account: string, key: FixtureApiKey): string {
  if (key.revoked) return 'revoked key'
  if (key.persona) return `persona ${key.persona}`
  return account
}

/** The short name of each documented key, by its secret. */
const known = new Map<string, string>(
  DEFAULT_ACCOUNTS.flatMap((account) =>
    account.apiKeys.map((key) => [key.key, keyName(account.name, key)]),
  ),
)
/** The credential each request of this page carried, by request id. */
const sentWith = new Map<string, string>()

interface View {
  state: SandboxState
  /** The `ETag` of `state`, when the sandbox sent one the page may read. */
  tag: string | null
  clock: { now: string; frozen: boolean }
  scenarios: {
    operation: string
    status: number | null
    delay_ms: number | null
    network_error: boolean
    remaining: number
  }[]
  journal: JournalEntry[]
}
let view: View | undefined

function tokenCredentials(): Credential[] {
  if (
    mode.kind === 'page' &&
    view?.state.tokens.some((token) => !secrets.has(token.id))
  ) {
    // @note The page's own sandbox: every token's secret is at hand, so
    // tokens minted before a reload stay usable when the data persists.
    for (const token of pageSandbox.dump().tokens)
      secrets.set(token.id, token.secret)
  }
  const now = Date.parse(view?.clock.now ?? new Date().toISOString())
  return (view?.state.tokens ?? [])
    .toReversed()
    .filter((token) => secrets.has(token.id))
    .map((token) => ({
      value: secrets.get(token.id)!,
      label: `Token ${token.id} (${token.scopes.join(' ')})${
        now >= Date.parse(token.expires_at) ? ', expired' : ''
      }`,
    }))
}

function fillCredentials(select: HTMLSelectElement, selected?: string): void {
  const current = selected ?? select.value
  select.replaceChildren()
  const group = (label: string, items: Credential[]) => {
    if (items.length === 0) return
    const optgroup = element('optgroup')
    optgroup.label = label
    for (const item of items) {
      const option = element('option', item.label)
      option.value = item.value
      optgroup.append(option)
    }
    select.append(optgroup)
  }
  group('Documented keys', documented)
  group('Tokens minted in this page', tokenCredentials())
  const none = element('option', 'No Authorization header')
  none.value = ''
  select.append(none)
  select.value = [...select.options].some((o) => o.value === current)
    ? current
    : DEMO_KEY_ONE
  showCredential(select)
}

/** Writes under a form's select what its request will carry. */
function showCredential(select: HTMLSelectElement): void {
  const shown = $(`#${select.id}-shown`)
  const option = select.selectedOptions[0]
  shown.textContent =
    select.value === ''
      ? 'Sends no Authorization header.'
      : `Sends Authorization: Bearer ${select.value.startsWith('sk_') ? select.value : maskSecret(select.value)} (${option?.label.replace(/:\s*sk_test_\w+$/, '') ?? ''})`
}

// ---------- rendering ----------

const customerCredential = $<HTMLSelectElement>('#customer-credential')
const tokenCredential = $<HTMLSelectElement>('#token-credential')

function relative(iso: string, now: number): string {
  const ms = Date.parse(iso) - now
  const minutes = Math.round(Math.abs(ms) / 60_000)
  const span =
    minutes < 1
      ? 'less than a minute'
      : minutes < 120
        ? `${minutes} min`
        : `${Math.round(minutes / 60)} h`
  return ms >= 0 ? `in ${span}` : `${span} ago`
}

/** The keys of an account, the documented ones by name and in full. */
function keyList(account: SandboxState['accounts'][number]): HTMLElement {
  const fixture = DEFAULT_ACCOUNTS.find((a) => a.id === account.id)
  const list = element('ul', undefined, 'plain')
  account.api_keys.forEach((key, i) => {
    const item = element('li')
    // @note Inspection masks every key to its last four characters, so the
    // five persona keys read alike; the documented ones are public, shown whole.
    const match = fixture?.apiKeys[i]
    if (match && maskSecret(match.key) === key.key) {
      item.append(element('code', match.key))
      if (match.persona || match.revoked)
        item.append(' ', element('span', keyName('', match), 'tag'))
    } else {
      item.append(element('code', key.key))
      if (key.revoked) item.append(' ', element('span', 'revoked key', 'tag'))
    }
    list.append(item)
  })
  return list
}

/** The credential of a journal entry, as precisely as the page can name it. */
function journalCredential(entry: JournalEntry): string {
  if (entry.credential === null) return ''
  const sent = sentWith.get(entry.request_id)
  if (sent !== undefined) {
    const token = [...secrets].find(([, secret]) => secret === sent)?.[0]
    const name = known.get(sent) ?? (token && `token ${token}`)
    return name ? `${entry.credential} (${name})` : entry.credential
  }
  const fixture = DEFAULT_ACCOUNTS.find((a) => a.id === entry.account_id)
  const alike = (fixture?.apiKeys ?? []).filter(
    (key) => maskSecret(key.key) === entry.credential,
  )
  if (alike.length === 1)
    return `${entry.credential} (${keyName(fixture!.name, alike[0]!)})`
  if (alike.length > 1)
    return `${entry.credential} (one of ${alike.length} ${fixture!.name} keys)`
  return entry.credential
}

function renderClock(v: View): void {
  const time = $<HTMLTimeElement>('#clock-now')
  time.dateTime = v.clock.now
  time.textContent = v.clock.now.replace('T', ' ').slice(0, 19) + ' UTC'
  $('#clock-mode').textContent = v.clock.frozen
    ? '(stopped where it was set)'
    : '(following real time)'
}

const painted = new Map<string, string>()

/**
 * Whether a part of the page already shows what `key` describes; if not,
 * notes it as shown. Rebuilding a table or a list under the pointer every
 * half second would drop a selection and close an open drop-down.
 */
function unchanged(part: string, key: unknown): boolean {
  const text = JSON.stringify(key)
  if (painted.get(part) === text) return true
  painted.set(part, text)
  return false
}

function renderTokens(v: View): void {
  const now = Date.parse(v.clock.now)
  const shown = v.state.tokens.map((t) => [
    t.id,
    relative(t.expires_at, now),
    now >= Date.parse(t.expires_at),
  ])
  if (unchanged('tokens', shown)) return
  const body = $('#tokens tbody')
  body.replaceChildren(
    ...v.state.tokens.toReversed().map((token) => {
      const expired = now >= Date.parse(token.expires_at)
      return row([
        element('code', token.id),
        token.scopes.join(' '),
        relative(token.expires_at, now),
        element(
          'span',
          expired ? 'expired' : 'valid',
          expired ? 'badge bad' : 'badge ok',
        ),
      ])
    }),
  )
  if (v.state.tokens.length === 0)
    body.append(row(['No tokens yet: create one on the left.', '', '', '']))
}

function renderScenarios(v: View): void {
  const why = pendingReason(v)
  if (unchanged('scenarios', [v.scenarios, why])) return
  const list = $('#scenarios')
  list.replaceChildren(
    ...v.scenarios.map((s) => {
      const what = s.network_error
        ? 'network error'
        : s.status !== null
          ? `fail with ${s.status}`
          : `wait ${s.delay_ms} ms`
      return element(
        'li',
        `Next ${s.remaining > 1 ? `${s.remaining} calls` : 'call'} of ${OPERATION_TEXT[s.operation] ?? s.operation}: ${what}`,
      )
    }),
  )
  if (list.childElementCount === 0)
    list.append(element('li', 'None queued: calls answer normally.', 'hint'))
  const note = $('#scenario-why')
  note.hidden = why === undefined
  note.textContent = why ?? ''
}

/**
 * Why the queue still holds a scenario after the newest call, when that call
 * could not use it: refused at authentication, another operation, or no
 * operation at all.
 */
function pendingReason(v: View): string | undefined {
  const last = v.journal[0]
  const first = v.scenarios[0]
  if (!last || !first || last.scenario !== null) return undefined
  const call = `the last call (${last.method} ${last.path}, ${statusLabel(last.status)}${last.code ? ` ${last.code}` : ''})`
  if (last.code !== null && AUTH_CODES.has(last.code))
    return `Still queued: ${call} was refused at authentication, which comes before scenarios, so it did not use the queued ${first.status ?? 'scenario'}. The next call with a valid credential will.`
  if (last.operation === null)
    return `Still queued: ${call} named no operation.`
  if (first.operation !== '*' && first.operation !== last.operation)
    return `Still queued: ${call} was not a call of ${OPERATION_TEXT[first.operation]}.`
  return undefined
}

function render(v: View): void {
  renderClock(v)
  renderTokens(v)
  renderScenarios(v)
  const { state } = v
  const names = new Map(state.accounts.map((a) => [a.id, a.name]))
  renderTables(v, names)
  if (!unchanged('credentials', tokenCredentials())) {
    fillCredentials(customerCredential)
    fillCredentials(tokenCredential)
  }
}

function renderTables(v: View, names: Map<string, string>): void {
  const { state } = v
  const accountCell = (id: string | null): Node | string => {
    if (id === null) return ''
    const cell = element('span', names.get(id) ?? id, 'nowrap')
    cell.title = id
    return cell
  }

  if (!unchanged('data', [state.accounts, state.customers]))
    renderData(state, accountCell)
  // Journal rows name accounts and the tokens this page minted.
  if (unchanged('journal', [v.journal, [...names], secrets.size])) return
  const body = $('#journal tbody')
  body.replaceChildren(
    ...v.journal.map((entry) =>
      row([
        entry.at.replace('T', ' ').slice(0, 19),
        `${entry.method} ${entry.path}`,
        element('span', statusLabel(entry.status), badgeClass(entry.status)),
        entry.code === null ? '' : element('code', entry.code),
        accountCell(entry.account_id),
        journalCredential(entry),
        entry.scenario ?? '',
        element('code', entry.request_id),
      ]),
    ),
  )
  if (v.journal.length === 0)
    body.append(row(['No requests yet.', '', '', '', '', '', '', '']))
}

function renderData(
  state: SandboxState,
  accountCell: (id: string | null) => Node | string,
): void {
  $('#accounts tbody').replaceChildren(
    ...state.accounts.map((account) => {
      const name = element('span', undefined, 'account')
      name.append(
        element('span', account.name, 'nowrap'),
        element('code', account.id, 'hint block'),
      )
      return row([
        name,
        keyList(account),
        String(account.customer_count),
        String(account.token_count),
      ])
    }),
  )

  const customers = state.customers.toReversed()
  $('#customers-count').textContent =
    `${customers.length} customers in all; the newest ${Math.min(10, customers.length)} here.`
  $('#customers tbody').replaceChildren(
    ...customers
      .slice(0, 10)
      .map((c) =>
        row([
          element('code', c.id),
          c.name ?? '',
          c.email ?? '',
          accountCell(c.account_id),
        ]),
      ),
  )
}

// ---------- keeping up with the sandbox ----------

let asked = 0
let shown = 0
let lastFull = 0
let polling: ReturnType<typeof setTimeout> | undefined

/**
 * The state, asked with the `ETag` of the one the page shows: unchanged, the
 * answer is a `304` of no body and the page keeps what it has.
 */
async function readState(
  had: View | undefined,
): Promise<Pick<View, 'state' | 'tag'>> {
  const response = await surface(
    'GET',
    'state',
    undefined,
    had?.tag ? { 'if-none-match': had.tag } : {},
  )
  if (response.status === 304 && had) return { state: had.state, tag: had.tag }
  return {
    state: (await response.json()) as SandboxState,
    tag: response.headers.get('etag'),
  }
}

/**
 * Reads the clock, the queue and the journal, and the state: every time when
 * the sandbox tags it (an unchanged state costs a 304), else only when the
 * journal moved, when asked, or every few seconds (a reset or a new key made
 * elsewhere leaves no journal entry).
 */
async function refresh(full = false): Promise<void> {
  const mine = ++asked
  const had = view
  const [clock, { scenarios }, { requests }, tagged] = await Promise.all([
    read<View['clock']>('clock'),
    read<{ scenarios: View['scenarios'] }>('scenarios'),
    read<{ requests: JournalEntry[] }>('requests?limit=50'),
    had?.tag ? readState(had) : undefined,
  ])
  const moved = requests[0]?.request_id !== had?.journal[0]?.request_id
  const stale = Date.now() - lastFull > 5000
  const current =
    tagged ??
    (full || moved || stale || !had
      ? await readState(had)
      : { state: had.state, tag: had.tag })
  if (current.state !== had?.state) lastFull = Date.now()
  // An older answer that arrives late must not paint over a newer one.
  if (mine < shown) return
  shown = mine
  view = { ...current, clock, scenarios, journal: requests }
  render(view)
}

function poll(): void {
  clearTimeout(polling)
  polling = setTimeout(async () => {
    // A tab out of sight asks nothing; shown again, it starts over.
    if (document.hidden) return
    try {
      await refresh()
      setStatus()
    } catch (error) {
      $('#status').textContent =
        `The sandbox at ${base || location.origin} does not answer (${(error as Error).message}); trying again.`
    }
    poll()
  }, POLL_MS)
}

document.addEventListener('visibilitychange', () => {
  if (!document.hidden) poll()
})

/** Runs a change, then shows the sandbox as it now is. */
async function act(change: () => Promise<unknown>): Promise<void> {
  try {
    await change()
  } catch (error) {
    $('#status').textContent = (error as Error).message
  }
  await refresh(true).catch(() => {})
}

// ---------- the two operations ----------

async function send(
  path: string,
  credential: string,
  body: unknown,
  extraHeaders: Record<string, string> = {},
): Promise<Response | undefined> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...extraHeaders,
  }
  if (credential !== '') headers.authorization = `Bearer ${credential}`
  const text = JSON.stringify(body, null, 2)
  const url = new URL(path, base || location.origin).href
  $('#request').textContent = [
    `POST ${url}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    '',
    text,
  ].join('\n')
  const status = $('#response-status')
  const output = $('#response')
  $('#exchange-empty').hidden = true
  $('#exchange').hidden = false
  $('#response-note').hidden = true
  status.className = 'badge pending'
  status.textContent = 'waiting for the response…'
  output.textContent = ''
  let response: Response
  try {
    response = await fetch(url, { method: 'POST', headers, body: text })
  } catch (error) {
    // The tables first, then the answer: once the status shows, all is shown.
    await refresh(true).catch(() => {})
    output.textContent = `The request failed before any response arrived: ${String(error)}`
    status.className = 'badge bad'
    status.textContent = 'network error'
    return undefined
  }
  const requestId = response.headers.get('x-request-id')
  if (requestId) sentWith.set(requestId, credential)
  const raw = await response.clone().text()
  let shownBody = raw
  try {
    shownBody = JSON.stringify(JSON.parse(raw), null, 2)
  } catch {
    // Not JSON: shown as it came.
  }
  await refresh(true).catch(() => {})
  output.textContent = [
    `HTTP ${statusLabel(response.status)}`,
    ...[...response.headers].map(([name, value]) => `${name}: ${value}`),
    '',
    shownBody,
  ].join('\n')
  if (response.status === 401 && view && view.scenarios.length > 0) {
    const note = $('#response-note')
    note.hidden = false
    note.textContent =
      'The queued scenario did not apply: this call was refused at authentication, before scenarios are used. It waits for the next call with a valid credential (see "Unhappy paths").'
  }
  status.className = badgeClass(response.status)
  status.textContent = statusLabel(response.status)
  return response
}

$<HTMLFormElement>('#customer-form').addEventListener('submit', (event) => {
  event.preventDefault()
  const idempotency = $<HTMLInputElement>('#customer-idempotency').value.trim()
  void send(
    '/v1/customers',
    customerCredential.value,
    {
      name: $<HTMLInputElement>('#customer-name').value,
      email: $<HTMLInputElement>('#customer-email').value,
    },
    idempotency ? { 'idempotency-key': idempotency } : {},
  )
})

for (const select of [customerCredential, tokenCredential])
  select.addEventListener('change', () => showCredential(select))

const scopes = $('#token-scopes')
const { assumptions } = await read<{ assumptions: Assumption[] }>(
  'assumptions',
).catch((error: Error) => {
  // A server that wants its admin token (one beyond loopback) says so here.
  const status = $('#status')
  status.textContent = `The sandbox at ${base || location.origin} does not let this page read it: ${error.message} `
  if (isSecureContext) {
    const link = element('a', 'Run the playground in this page instead.')
    link.href = '?mode=page'
    status.append(link)
  } else {
    // @note Page mode needs a service worker, which a plain-http page of
    // another machine never gets.
    status.append(
      'Nor can it run in this page, which is served over plain http from another machine: open it through localhost (an SSH tunnel: ssh -L 4100:localhost:4100) or over https.',
    )
  }
  // Nothing more to start; the status line says why and where to go.
  return new Promise<never>(() => {})
})
const catalog = assumptions.find((a) => a.option === 'scopes')?.value
for (const scope of Array.isArray(catalog)
  ? (catalog as string[])
  : ['customers:read', 'customers:write', 'tokens:write']) {
  const label = element('label', undefined, 'inline')
  const box = element('input')
  box.type = 'checkbox'
  box.name = 'scope'
  box.value = scope
  box.checked = scope === 'customers:write'
  label.append(box, ` ${scope}`)
  scopes.append(label)
}

let minted: string | undefined
$<HTMLFormElement>('#token-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  const chosen = [
    ...scopes.querySelectorAll<HTMLInputElement>('input:checked'),
  ].map((box) => box.value)
  const raw = $<HTMLInputElement>('#token-expires').value
  const expiresIn = raw === '' ? undefined : Number(raw)
  $('#minted').hidden = true
  const response = await send('/v2/tokens', tokenCredential.value, {
    scopes: chosen,
    ...(expiresIn !== undefined && { expires_in: expiresIn }),
  })
  if (response?.status === 201) {
    // @note Offered, not switched to: each form keeps the credential its
    // user chose, and the new token waits in both lists.
    const record = (await response.json()) as {
      id: string
      token: string
      scopes: string[]
    }
    rememberToken(record.id, record.token)
    minted = record.token
    fillCredentials(customerCredential)
    fillCredentials(tokenCredential)
    $('#minted-text').textContent =
      `Minted ${record.id} (${record.scopes.join(' ')}). It is now in both credential lists; "Create a customer" still sends what it showed before.`
    $('#minted').hidden = false
  }
})

$('#use-minted').addEventListener('click', () => {
  if (minted === undefined) return
  fillCredentials(customerCredential, minted)
  customerCredential.focus()
})

// ---------- clock, scenarios, reset, mode, persistence ----------

for (const button of document.querySelectorAll<HTMLButtonElement>(
  '[data-advance]',
)) {
  button.addEventListener('click', () =>
    act(() =>
      surface('POST', 'clock', {
        advance_seconds: Number(button.dataset.advance),
      }),
    ),
  )
}

for (const button of document.querySelectorAll<HTMLButtonElement>(
  '[data-scenario]',
)) {
  button.addEventListener('click', () => {
    const kind = button.dataset.scenario
    return act(() =>
      surface('POST', 'scenarios', {
        operation: $<HTMLSelectElement>('#scenario-operation').value,
        ...(kind === '503' && { status: 503 }),
        ...(kind === 'delay' && { delay_ms: 2000 }),
        ...(kind === 'network' && { network_error: true }),
      }),
    )
  })
}

$('#clear-scenarios').addEventListener('click', () =>
  act(() => surface('DELETE', 'scenarios')),
)

$('#reset').addEventListener('click', async () => {
  await act(() => surface('POST', 'reset', {}))
  $('#exchange').hidden = true
  $('#exchange-empty').hidden = false
  $('#minted').hidden = true
  fillCredentials(customerCredential, DEMO_KEY_ONE)
  fillCredentials(tokenCredential, DEMO_KEY_ONE)
})

for (const radio of document.querySelectorAll<HTMLInputElement>(
  '#mode input',
)) {
  radio.checked = radio.value === mode.kind
  radio.disabled = radio.value === 'server' && mode.server === undefined
  radio.addEventListener('change', () => {
    const url = new URL(location.href)
    url.searchParams.set('mode', radio.value)
    location.assign(url)
  })
}
if (mode.server)
  $('#mode-server-label').textContent = `The server at ${mode.server}`

const persistBox = $<HTMLInputElement>('#persist')
$('#persist-label').hidden = mode.kind !== 'page'
persistBox.checked = persist
persistBox.addEventListener('change', () => {
  try {
    if (persistBox.checked) {
      localStorage.setItem(PERSIST_FLAG, '1')
    } else {
      localStorage.removeItem(PERSIST_FLAG)
      localStorage.removeItem(STORAGE_KEY)
    }
  } catch {
    // Storage blocked: the reload starts without persistence.
  }
  // Persistence is decided when the worker starts.
  location.reload()
})

$('#assumptions tbody').replaceChildren(
  ...assumptions.map((a) =>
    row([
      withCode(a.interface),
      withCode(a.default),
      a.option === null ? 'fixed' : element('code', a.option),
      a.option === null ? '' : element('code', JSON.stringify(a.value)),
    ]),
  ),
)

// ---------- start ----------

function setStatus(): void {
  $('#status').textContent =
    mode.kind === 'server'
      ? `Showing the sandbox server at ${mode.origin}${sameOrigin ? '' : ' (another origin)'}: what curl, tests and this page send to it appears here.`
      : `Running in this page through MSW's service worker${
          persist
            ? restored
              ? '; data restored from localStorage'
              : '; data kept in localStorage'
            : ''
        }.${mode.note ? ` ${mode.note}` : ''}`
}
$('#lead').textContent =
  mode.kind === 'server'
    ? 'The forms below call the server; the tables show its accounts, tokens, customers and journal as they change, whoever calls it. The clock and the unhappy paths act on the server.'
    : "Everything runs in this page: MSW's service worker answers the API and /__sandbox/* with the sandbox's own resolvers. No server is involved, and nothing here reaches one."
document.body.dataset.mode = mode.kind

fillCredentials(customerCredential, DEMO_KEY_ONE)
fillCredentials(tokenCredential, DEMO_KEY_ONE)
await refresh(true)
setStatus()
poll()
// Usable now: until here a click would have reached no handler.
for (const button of document.querySelectorAll('button'))
  button.disabled = false
document.body.dataset.ready = 'true'
