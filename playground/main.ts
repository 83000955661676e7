import {
  DEFAULT_ACCOUNTS,
  DEMO_KEY_ONE,
  type FixtureApiKey,
} from '../fixtures/demo-keys.ts'
import { startSandboxWorker } from '../src/browser.ts'
import type { Assumption } from '../src/assumptions.ts'
import { STATUS_TEXT } from '../src/errors.ts'
import type { Persona } from '../src/personas.ts'

const PERSIST_FLAG = 'customer-token-sandbox:playground:persist'
const STORAGE_KEY = 'customer-token-sandbox:playground'
const persist = readFlag()

const $ = <T extends Element = HTMLElement>(selector: string): T => {
  const found = document.querySelector<T>(selector)
  if (!found) throw new Error(`The page has no ${selector}`)
  return found
}

const sandbox = await startSandboxWorker({
  persist: persist ? STORAGE_KEY : false,
  serviceWorker: {
    url: new URL('mockServiceWorker.js', document.baseURI).pathname,
  },
}).catch((error: Error) => {
  $('#status').textContent =
    `The service worker did not start: ${error.message}`
  throw error
})

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

function row(cells: (string | Node)[]): HTMLTableRowElement {
  const tr = element('tr')
  for (const cell of cells) {
    const td = element('td')
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

function relative(iso: string): string {
  const ms = Date.parse(iso) - sandbox.clock.now().getTime()
  const minutes = Math.round(Math.abs(ms) / 60_000)
  const span =
    minutes < 1
      ? 'less than a minute'
      : minutes < 120
        ? `${minutes} min`
        : `${Math.round(minutes / 60)} h`
  return ms >= 0 ? `in ${span}` : `${span} ago`
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

/** Sends a call of the sandbox's own surface, through the worker like any other. */
async function surface(
  method: string,
  path: string,
  body?: unknown,
): Promise<Response> {
  const response = await fetch(`/__sandbox/${path}`, {
    method,
    ...(body !== undefined && {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  })
  if (!response.ok) {
    const problem = (await response.json()) as { detail?: string }
    throw new Error(
      problem.detail ?? `${method} /__sandbox/${path}: ${response.status}`,
    )
  }
  return response
}

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

function mintedTokens(): Credential[] {
  // @note The playground is the sandbox's owner: it may read full secrets,
  // so tokens minted before a reload stay usable when the data persists.
  return sandbox
    .dump()
    .tokens.toReversed()
    .map((token) => ({
      value: token.secret,
      label: `Token ${token.id} (${token.scopes.join(' ')})${
        sandbox.clock.now().getTime() >= Date.parse(token.expires_at)
          ? ', expired'
          : ''
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
  group('Tokens minted here', mintedTokens())
  const none = element('option', 'No Authorization header')
  none.value = ''
  select.append(none)
  select.value = [...select.options].some((o) => o.value === current)
    ? current
    : DEMO_KEY_ONE
}

// ---------- rendering ----------

const customerCredential = $<HTMLSelectElement>('#customer-credential')
const tokenCredential = $<HTMLSelectElement>('#token-credential')

function renderClock(): void {
  const now = sandbox.clock.now()
  const time = $<HTMLTimeElement>('#clock-now')
  time.dateTime = now.toISOString()
  time.textContent = now.toISOString().replace('T', ' ').slice(0, 19) + ' UTC'
  $('#clock-mode').textContent = sandbox.clock.frozen
    ? '(stopped where it was set)'
    : '(following real time)'
}

function renderTokens(): void {
  const tokens = sandbox.tokens.list().toReversed()
  const body = $('#tokens tbody')
  body.replaceChildren(
    ...tokens.map((token) => {
      const state = element(
        'span',
        token.expired ? 'expired' : 'valid',
        token.expired ? 'badge bad' : 'badge ok',
      )
      return row([
        element('code', token.id),
        token.scopes.join(' '),
        relative(token.expires_at),
        state,
      ])
    }),
  )
  if (tokens.length === 0)
    body.append(row(['No tokens yet: create one on the left.', '', '', '']))
}

function renderScenarios(): void {
  const list = $('#scenarios')
  list.replaceChildren(
    ...sandbox.scenarios.list().map((s) => {
      const what = s.networkError
        ? 'network error'
        : s.status !== undefined
          ? `fail with ${s.status}`
          : `wait ${s.delayMs} ms`
      const target =
        s.operation === '*'
          ? 'either operation'
          : s.operation === 'createCustomer'
            ? 'POST /v1/customers'
            : 'POST /v2/tokens'
      return element(
        'li',
        `Next ${s.remaining > 1 ? `${s.remaining} calls` : 'call'} of ${target}: ${what}`,
      )
    }),
  )
  if (list.childElementCount === 0)
    list.append(element('li', 'None queued: calls answer normally.', 'hint'))
}

function renderAll(): void {
  let state
  try {
    state = sandbox.state()
  } catch {
    return // Seeding after a reset; the next tick catches up.
  }
  renderClock()
  renderTokens()
  renderScenarios()
  const names = new Map(state.accounts.map((a) => [a.id, a.name]))

  $('#accounts tbody').replaceChildren(
    ...state.accounts.map((account) => {
      const keys = element('ul', undefined, 'plain')
      for (const key of account.api_keys)
        keys.append(
          element('li', `${key.key}${key.revoked ? ' (revoked)' : ''}`),
        )
      const name = element('span')
      name.append(account.name, element('br'), element('code', account.id))
      return row([
        name,
        keys,
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
          c.name,
          c.email,
          names.get(c.account_id) ?? c.account_id,
        ]),
      ),
  )

  const journal = sandbox.journal.list({ limit: 50 })
  const body = $('#journal tbody')
  body.replaceChildren(
    ...journal.map((entry) =>
      row([
        entry.at.replace('T', ' ').slice(0, 19),
        `${entry.method} ${entry.path}`,
        element('span', statusLabel(entry.status), badgeClass(entry.status)),
        entry.code ?? '',
        entry.account_id
          ? (names.get(entry.account_id) ?? entry.account_id)
          : '',
        entry.credential ?? '',
        entry.scenario ?? '',
        element('code', entry.request_id),
      ]),
    ),
  )
  if (journal.length === 0)
    body.append(row(['No requests yet.', '', '', '', '', '', '', '']))

  fillCredentials(customerCredential)
  fillCredentials(tokenCredential)
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
  const url = new URL(path, location.origin).href
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
  status.className = 'badge pending'
  status.textContent = 'waiting for the response…'
  output.textContent = ''
  let response: Response
  try {
    response = await fetch(path, { method: 'POST', headers, body: text })
  } catch (error) {
    status.className = 'badge bad'
    status.textContent = 'network error'
    output.textContent = `The request failed before any response arrived: ${String(error)}`
    renderAll()
    return undefined
  }
  const raw = await response.clone().text()
  let shown = raw
  try {
    shown = JSON.stringify(JSON.parse(raw), null, 2)
  } catch {
    // Not JSON: shown as it came.
  }
  status.className = badgeClass(response.status)
  status.textContent = statusLabel(response.status)
  output.textContent = [
    `HTTP ${statusLabel(response.status)}`,
    ...[...response.headers].map(([name, value]) => `${name}: ${value}`),
    '',
    shown,
  ].join('\n')
  renderAll()
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

const scopes = $('#token-scopes')
for (const scope of sandbox.options.scopes) {
  const label = element('label', undefined, 'inline')
  const box = element('input')
  box.type = 'checkbox'
  box.name = 'scope'
  box.value = scope
  box.checked = scope === 'customers:write'
  label.append(box, ` ${scope}`)
  scopes.append(label)
}

$<HTMLFormElement>('#token-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  const chosen = [
    ...scopes.querySelectorAll<HTMLInputElement>('input:checked'),
  ].map((box) => box.value)
  const raw = $<HTMLInputElement>('#token-expires').value
  const expiresIn = raw === '' ? undefined : Number(raw)
  const response = await send('/v2/tokens', tokenCredential.value, {
    scopes: chosen,
    ...(expiresIn !== undefined && { expires_in: expiresIn }),
  })
  if (response?.status === 201) {
    // The new token is ready to use in "Create a customer".
    const { token } = (await response.json()) as { token: string }
    fillCredentials(customerCredential, token)
  }
})

// ---------- clock, scenarios, reset, persistence ----------

for (const button of document.querySelectorAll<HTMLButtonElement>(
  '[data-advance]',
)) {
  button.addEventListener('click', async () => {
    await surface('POST', 'clock', {
      advance_seconds: Number(button.dataset.advance),
    })
    renderAll()
  })
}

for (const button of document.querySelectorAll<HTMLButtonElement>(
  '[data-scenario]',
)) {
  button.addEventListener('click', async () => {
    const kind = button.dataset.scenario
    await surface('POST', 'scenarios', {
      operation: $<HTMLSelectElement>('#scenario-operation').value,
      ...(kind === '503' && { status: 503 }),
      ...(kind === 'delay' && { delay_ms: 2000 }),
      ...(kind === 'network' && { network_error: true }),
    })
    renderScenarios()
  })
}

$('#clear-scenarios').addEventListener('click', async () => {
  await surface('DELETE', 'scenarios')
  renderScenarios()
})

$('#reset').addEventListener('click', async () => {
  await surface('POST', 'reset', {})
  $('#exchange').hidden = true
  $('#exchange-empty').hidden = false
  fillCredentials(customerCredential, DEMO_KEY_ONE)
  fillCredentials(tokenCredential, DEMO_KEY_ONE)
  renderAll()
})

const persistBox = $<HTMLInputElement>('#persist')
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

// ---------- assumptions ----------

async function renderAssumptions(): Promise<void> {
  const response = await surface('GET', 'assumptions')
  const { assumptions } = (await response.json()) as {
    assumptions: Assumption[]
  }
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
}

// ---------- start ----------

fillCredentials(customerCredential, DEMO_KEY_ONE)
fillCredentials(tokenCredential, DEMO_KEY_ONE)
renderAll()
await renderAssumptions()
let shown = sandbox.journal.last()?.request_id
setInterval(() => {
  // Requests from elsewhere (the console, a script): everything again.
  const newest = sandbox.journal.last()?.request_id
  if (newest !== shown) {
    shown = newest
    renderAll()
    return
  }
  renderClock()
  renderTokens()
  renderScenarios()
}, 1000)
$('#status').textContent = `Running in this page through MSW's service worker${
  persist
    ? sandbox.restored
      ? '; data restored from localStorage'
      : '; data kept in localStorage'
    : ''
}.`
// Usable now: until here a click would have reached no handler.
for (const button of document.querySelectorAll('button'))
  button.disabled = false
document.body.dataset.ready = 'true'
