// The CLI's main(): parses the command line and starts the server, verify or record.
import { parseArgs, styleText } from 'node:util'
import { VERSION } from '../version.ts'
import { redactUrl } from '../_utils.ts'
import { DEFAULT_ACCOUNTS, DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { DataFileError } from '../model/data-file.ts'
import type { OptionNaming } from '../option-messages.ts'
import type { SandboxCore } from '../sandbox.ts'
import {
  FLAG_NAMING,
  FLAG_ROWS,
  FLAG_TABLE,
  NAME,
  namingFrom,
  optionErrorText,
  PARSE_ARGS_OPTIONS,
  UsageError,
  readConfig,
  renderUsage,
} from './flags.ts'
import type { Persona } from '../model/personas.ts'
import type { CliIO, MainResult } from './io.ts'
import type {
  RequestLog,
  SandboxServer,
  SandboxServerOptions,
} from '../runtimes/node.ts'

export type { CliIO, MainResult }

/** Options of `main()`. */
export interface MainOptions extends Partial<CliIO> {
  /** The arguments after the program's name. @default process.argv.slice(2) */
  args?: string[]
}

/**
 * The credentials of a recording that the session holds no key for (masked,
 * as recorded), whose records `readSessionFile` put in the first account.
 */
function unheldCredentials(from: unknown): {
  credentials: string[]
  account: string | undefined
  /** The keys whose secrets the recording masked, which `readSessionFile` renewed. */
  renewed: string[]
} {
  const session = from as
    | {
        data?: { accounts?: { id?: string }[] }
        recorded?: { unheld_credentials?: string[]; renewed_keys?: string[] }
      }
    | undefined
  return {
    credentials: session?.recorded?.unheld_credentials ?? [],
    account: session?.data?.accounts?.[0]?.id,
    renewed: session?.recorded?.renewed_keys ?? [],
  }
}

/** The `--help` text, built from the flag table. */
export const USAGE: string = renderUsage()

/** Settings of the CLI beyond the server's options. */
interface CliSettings {
  logFormat: 'pretty' | 'json'
  quiet: boolean
  debug: boolean
}

/**
 * Reads the command line, the environment and the config file into the
 * server's options and the CLI's settings, each option through its row of
 * `FLAG_TABLE`: a config file's value, then the environment's, then the flag's.
 * A mistake throws a `UsageError` naming it.
 *
 * @example
 * const { options } = await readCommandLine(['--rate-limit', '10/m'], {})
 * options.rateLimit // { limit: 10, windowSeconds: 60 }
 */
export async function readCommandLine(
  args: string[],
  env: CliIO['env'],
): Promise<{
  help?: true
  version?: true
  options?: SandboxServerOptions
  settings?: CliSettings
  /** The options whose value the config file gave, not a flag or the environment. */
  fromConfig?: ReadonlySet<string>
}> {
  let values: Record<
    string,
    string | boolean | (string | boolean)[] | undefined
  >
  try {
    values = parseArgs({
      args,
      options: PARSE_ARGS_OPTIONS,
      strict: true,
      allowPositionals: false,
      allowNegative: true,
    }).values
  } catch (error) {
    throw new UsageError(
      describeParseError(error as Error & { code?: string }, args),
    )
  }
  if (values.help) return { help: true }
  if (values.version) return { version: true }

  const config =
    typeof values.config === 'string' ? await readConfig(values.config) : {}
  const options: Record<string, unknown> = {}
  const fromConfig = new Set<string>()
  const settings: Record<string, unknown> = {
    logFormat: FLAG_TABLE.logFormat.default,
    quiet: false,
    debug: false,
  }
  for (const [name, row] of FLAG_ROWS) {
    const into = row.target === 'cli' ? settings : options
    if (name in config) {
      into[name] = config[name]
      fromConfig.add(name)
    }
    const fromEnv = row.env === undefined ? undefined : env[row.env]
    const given =
      row.flag === undefined ? undefined : (values[row.flag] ?? undefined)
    const raw = given ?? (fromEnv === '' ? undefined : fromEnv)
    if (raw === undefined) continue
    fromConfig.delete(name)
    if (typeof raw === 'boolean' || row.parse === undefined) {
      into[name] = raw === true || raw === 'true'
      continue
    }
    for (const text of Array.isArray(raw) ? raw : [raw]) {
      if (typeof text !== 'string') continue
      let value: unknown
      try {
        value = await row.parse(text, row.flag ?? name)
      } catch (error) {
        // The flag's message, with the variable that gave the value.
        if (given !== undefined || !(error instanceof UsageError)) throw error
        throw new UsageError(
          `${row.env}=${text} in the environment: ${error.message}`,
        )
      }
      into[name] =
        row.merge && typeof into[name] === 'object'
          ? { ...(into[name] as object), ...(value as object) }
          : value
    }
  }
  delete settings.config
  // @note Read where the error is reported (`reportUnexpected` in src/request/errors.ts), in this process.
  if (settings.debug) process.env.SANDBOX_DEBUG = '1'
  return {
    options: options as SandboxServerOptions,
    settings: settings as unknown as CliSettings,
    fromConfig,
  }
}

/**
 * Runs the CLI: parses `args`, starts the server and prints the banner.
 * Errors are caught here once and printed as one line.
 *
 * @example
 * const { server, exitCode } = await main({ args: ['--port', '0', '--quiet'] })
 * await server?.close()
 */
export async function main({
  args = process.argv.slice(2),
  stdout = process.stdout,
  stderr = process.stderr,
  env = process.env,
}: MainOptions = {}): Promise<MainResult> {
  if (args[0] === 'verify' || args[0] === 'record') {
    // @note Loaded only for these commands: serving stays as it was.
    const { runCommand } = await import('./verify/cli.ts')
    return runCommand(args[0], args.slice(1), { stdout, stderr, env })
  }
  const err = createOutput(stderr)
  const out = createOutput(stdout, (error) =>
    err.write(
      `${NAME}: stdout closed (${error.code ?? error.message}): the request log stops, the server keeps serving\n`,
    ),
  )
  const color =
    Boolean(stdout.isTTY) &&
    env.NO_COLOR === undefined &&
    env.FORCE_COLOR !== '0'
  const paint = (
    format: Parameters<typeof styleText>[0],
    text: string,
  ): string => (color ? styleText(format, text) : text)
  let resolved: Awaited<ReturnType<typeof readCommandLine>>
  try {
    resolved = await readCommandLine(args, env)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    err.write(`${NAME}: ${error.message}\n\n${USAGE}`)
    return { exitCode: 2 }
  }
  if (resolved.help) {
    out.write(USAGE)
    return { exitCode: 0 }
  }
  if (resolved.version) {
    out.write(`${VERSION}\n`)
    return { exitCode: 0 }
  }
  const options = resolved.options!
  const settings = resolved.settings!
  const json = settings.logFormat === 'json'
  const line = (record: Record<string, unknown>): void => {
    out.write(
      `${JSON.stringify({ time: new Date().toISOString(), ...record })}\n`,
    )
  }

  // @note Loaded only to serve: --help and --version stay instant.
  const { createSandboxServer, SandboxStartError } =
    await import('../runtimes/node.ts')
  const progress = createProgress(out, json || settings.quiet, paint)
  let server: SandboxServer
  try {
    server = await createSandboxServer({
      ...options,
      onSeedProgress: progress.update,
      ...(!settings.quiet && {
        onLog: json
          ? (log: RequestLog) => {
              if (out.open) line({ event: 'request', ...log })
            }
          : (log: RequestLog) => {
              if (out.open) out.write(formatLog(log, paint))
            },
      }),
      ...(json && {
        onFlush: (info) =>
          line({
            event: 'flush',
            snapshot_at: info.snapshotAt,
            customers: info.customers,
            tokens: info.tokens,
            bytes: info.bytes,
          }),
      }),
    })
  } catch (error) {
    progress.done()
    // Said with the flags: the message names the JavaScript options.
    if (error instanceof SandboxStartError) {
      err.write(`${NAME}: ${error.explain(FLAG_NAMING)}\n`)
      return { exitCode: error.exitCode }
    }
    if (error instanceof DataFileError) {
      err.write(`${NAME}: ${error.explain(FLAG_NAMING)}\n`)
      return { exitCode: 1 }
    }
    if (error instanceof TypeError || error instanceof RangeError) {
      // A bad option value: createSandbox says which and how to fix it,
      // and the usage follows, as after a flag the table refuses.
      const message = optionErrorText(
        error,
        namingFrom(resolved.fromConfig ?? new Set()),
      )
      err.write(`${NAME}: ${message}\n\n${USAGE}`)
      return { exitCode: 2 }
    }
    throw error
  }
  progress.done()
  const store = storeShown(options.store)
  if (server.loadedFromFile && options.from !== undefined) {
    // @note As a database's init scripts: a restart with the same command
    // line goes on with the file. Said, since the session was asked for.
    err.write(
      store === null
        ? `${NAME}: --from was not used: the data file ${options.dataFile} already holds data, and --from starts only a data file that does not exist yet or is empty. Delete the data file (or pass another --data-file) to start from the session.\n`
        : `${NAME}: --from was not used: the store ${store} already holds this sandbox, as another replica or an earlier run left it, and --from starts only a store that holds none yet. Give the store another namespace (or database) to start from the session.\n`,
    )
  }
  const unheld = unheldCredentials(options.from)
  if (!server.loadedFromFile && unheld.credentials.length > 1) {
    // @note One account stands for all of them: said, as it merges what the
    // service may keep in accounts apart.
    err.write(
      `${NAME}: --from: what ${unheld.credentials.length} credentials of the recording made (${unheld.credentials.join(', ')}) is all in the first account, ${unheld.account}: they are no keys of the sandbox, so which accounts of the service they stand for cannot be told.\n`,
    )
  }
  if (!server.loadedFromFile && unheld.renewed.length > 0) {
    // @note Said, as a client holding one of them is now refused: the
    // recording kept the customers they made, not the keys themselves.
    err.write(
      `${NAME}: --from: the recording masked the API keys of its own fixtures (${unheld.renewed.join(', ')}), as record does without --keep-secrets: they were given new secrets, so a client holding one of them gets 401.\n`,
    )
  }
  // Said of the options given, as --from is: a default is no one's wish.
  const naming = namingFrom(resolved.fromConfig ?? new Set())
  for (const { option, fleet, own } of server.unusedOptions) {
    if (!(option in options)) continue
    err.write(
      option === 'fixtures'
        ? `${NAME}: ${naming.name(option)} was not used: the store ${store} already holds this sandbox, seeded with other fixtures as another replica or an earlier run left it, and fixtures shape only a store that holds none yet. Give the store another namespace (or database) to start from them.\n`
        : `${NAME}: ${naming.set(option, String(own))} was not used: the store ${store} already holds this sandbox, seeded with ${naming.set(option, String(fleet))} as another replica or an earlier run left it, and ${naming.name(option)} shapes only a store that holds none yet. Give the store another namespace (or database) to start from it.\n`,
    )
  }
  if (server.loadedFromFile) {
    const where =
      store === null
        ? `The data file ${options.dataFile}`
        : `The store ${store}`
    for (const over of limitsExceeded(server.sandbox, naming))
      err.write(`${NAME}: ${where} ${over}\n`)
  }

  if (json) {
    line({
      event: 'listening',
      url: server.url,
      seed: server.sandbox.state().seed,
      demo_key: DEMO_KEY_ONE,
      data_file: options.dataFile ?? null,
      store,
      loaded_from_file: server.loadedFromFile,
    })
  } else if (settings.quiet) {
    out.write(`${server.url}\n`)
  } else {
    out.write(banner(server, options, paint))
  }
  return { server }
}

/** A stream the CLI writes to, which stops taking writes once it has failed. */
interface Output {
  write(text: string): void
  /** False once a write failed: its reader went away. */
  readonly open: boolean
  readonly isTTY: boolean
}

/**
 * Guards a stream the CLI writes to: when its reader goes away (EPIPE after
 * `| head -1`, or a parent that spawned the server and exited), the error
 * would end the process as an unhandled 'error' event. The server keeps
 * serving instead, and nothing more is written there.
 *
 * @example
 * const out = createOutput(process.stdout)
 * out.write('listening\n') // dropped, never thrown, once stdout is closed
 */
function createOutput(
  stream: NodeJS.WritableStream & { isTTY?: boolean },
  onClose?: (error: NodeJS.ErrnoException) => void,
): Output {
  let open = true
  // @note Kept for good: process.stdout and stderr cannot be destroyed, so
  // every later write (console.error's too) fails and emits again. A caller's
  // bare `{ write }` object emits nothing and needs no listener.
  if (typeof stream.on === 'function') {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (!open) return
      open = false
      onClose?.(error)
    })
  }
  return {
    write(text) {
      if (open) stream.write(text)
    },
    get open() {
      return open
    },
    isTTY: Boolean(stream.isTTY),
  }
}

type Paint = (format: Parameters<typeof styleText>[0], text: string) => string

function createProgress(stdout: Output, silent: boolean, paint: Paint) {
  const started = performance.now()
  let shown = false
  let total = 0
  return {
    update(done: number, all: number): Promise<void> {
      total = all
      // @note The seed waits for this: a turn of the event loop every few
      // thousand customers lets Ctrl-C and SIGTERM through during a long one.
      const turn = new Promise<void>((resolve) => setImmediate(resolve))
      if (silent || !stdout.isTTY || all < 10_000) return turn
      const width = 30
      const filled = Math.round((done / all) * width)
      stdout.write(
        `\rSeeding customers ${paint('cyan', '█'.repeat(filled))}${'░'.repeat(width - filled)} ${String(Math.round((done / all) * 100)).padStart(3)}% ${done.toLocaleString('en')}/${all.toLocaleString('en')}`,
      )
      shown = true
      return turn
    },
    done() {
      if (silent || total < 10_000) return
      const seconds = ((performance.now() - started) / 1000).toFixed(1)
      stdout.write(
        `${shown ? '\n' : ''}Seeded ${total.toLocaleString('en')} customers in ${seconds} s\n`,
      )
    },
  }
}

function formatLog(log: RequestLog, paint: Paint): string {
  // Status 0: a scenario dropped the connection unanswered.
  const status = log.status === 0 ? 'network_error' : String(log.status)
  const colour =
    log.status >= 500 || log.status === 0
      ? 'red'
      : log.status >= 400
        ? 'yellow'
        : 'green'
  const time = new Date().toISOString().slice(11, 23)
  return `${paint('gray', time)} ${log.method.padEnd(6)} ${printable(log.path)} ${paint(colour, status)} ${log.duration_ms.toFixed(1)}ms${
    log.account_id ? ` ${log.account_id}` : ''
  }${log.credential ? ` ${paint('gray', printable(log.credential))}` : ''}\n`
}

/**
 * A value a client sent, as a terminal line shows it: control characters
 * (C0, DEL and C1) escaped. A masked credential keeps its last four
 * characters, and node takes bytes 0x80-0xFF in a header as Latin-1: U+009B
 * is a terminal's CSI, and `…\u009b2J` cleared the screen of whoever read
 * the log.
 *
 * @example
 * printable('sk_test_…\u009b2J') // 'sk_test_…\\u009b2J'
 */
function printable(text: string): string {
  return text.replace(
    // oxlint-disable-next-line no-control-regex -- control characters are what it finds
    /[\u0000-\u001f\u007f-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
}

/** What each persona key does, in a banner line. */
const PERSONA_SUMMARY: Record<Persona, string> = {
  'rate-limited': 'one call a minute, then 429',
  slow: 'every answer takes 2 s',
  unavailable: 'every call is a 503',
  'expired-tokens': 'mints already expired tokens',
  'read-only': 'no customers:write',
}

function banner(
  server: SandboxServer,
  options: SandboxServerOptions,
  paint: Paint,
): string {
  const { url, sandbox } = server
  const state = sandbox.state()
  const keys = DEFAULT_ACCOUNTS.flatMap((account) =>
    account.apiKeys.map((key) =>
      key.revoked
        ? `${key.key}  revoked: always 401 invalid_credentials`
        : key.persona
          ? `${key.key}  persona: ${PERSONA_SUMMARY[key.persona]}`
          : `${key.key}  ${account.name} (${account.id})`,
    ),
  )
  const usesDefaultAccounts = options.fixtures === undefined
  const customer = `curl -sS -X POST ${url}/v1/customers -H 'Authorization: Bearer ${DEMO_KEY_ONE}' -H 'Content-Type: application/json' -d '{"name":"Ada Lovelace","email":"ada@example.com"}'`
  const token = `curl -sS -X POST ${url}/v2/tokens -H 'Authorization: Bearer ${DEMO_KEY_ONE}' -H 'Content-Type: application/json' -d '{"scopes":["customers:read"],"expires_in":3600}'`
  const rows: [string, string][] = [
    ['URL', paint('bold', url)],
    [
      'Playground',
      server.playgroundUrl === null
        ? 'not built (npm run build:playground)'
        : `${paint('bold', server.playgroundUrl)} (shows and drives this server; ?mode=page runs it in the browser alone)`,
    ],
    ['Demo key', paint('bold', DEMO_KEY_ONE)],
    [
      'Data',
      `seed ${state.seed}, ${state.accounts.length} accounts, ${state.customers.length} customers${
        server.loadedFromFile
          ? ` (loaded from ${storeShown(options.store) ?? options.dataFile})`
          : (storeShown(options.store) ?? options.dataFile)
            ? ` (saved to ${storeShown(options.store) ?? options.dataFile})`
            : ''
      }`,
    ],
  ]
  const out = [
    `\n${paint('bold', NAME)} ${VERSION}: the Customer and Token Service sandbox\n`,
  ]
  for (const [label, value] of rows) out.push(`  ${label.padEnd(10)} ${value}`)
  if (usesDefaultAccounts) {
    out.push(`  ${'Keys'.padEnd(10)} ${keys[0]}`)
    for (const key of keys.slice(1)) out.push(`  ${''.padEnd(10)} ${key}`)
  }
  out.push(
    '',
    '  Create a customer:',
    `    ${customer}`,
    '  Create a token:',
    `    ${token}`,
    '',
    `  Sandbox   ${url}/__sandbox/state · /__sandbox/requests · /__sandbox/assumptions · /__sandbox/clock`,
    `  Stop      Ctrl+C${options.dataFile ? ' (the data file is saved first)' : ''}`,
    '',
  )
  return `${out.join('\n')}\n`
}

/** One line for what node:util's parseArgs refused, naming the flag to use. */
function describeParseError(
  error: Error & { code?: string },
  args: readonly string[],
): string {
  const flag = /'(-{1,2}[^' ]+)/.exec(error.message)?.[1]
  if (
    flag !== undefined &&
    error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'
  ) {
    const name = flag.replace(/^--(no-)?/, '')
    if (error.message.includes('does not take an argument'))
      return `${flag} takes no value: write --${name} to turn it on or --no-${name} to turn it off`
    // @note parseArgs calls a value that starts with a dash ambiguous:
    // `--seed --port 0` misses one, `--port -1` has one, to be read.
    const next = args.find(
      (arg, i) => args[i - 1] === flag && arg.startsWith('-'),
    )
    if (
      next !== undefined &&
      !(next.replace(/^--?/, '') in PARSE_ARGS_OPTIONS)
    ) {
      const row = FLAG_ROWS.find(([, r]) => r.flag === name)?.[1]
      try {
        row?.parse?.(next, name)
      } catch (refusal) {
        if (refusal instanceof UsageError) return refusal.message
      }
      return `${flag} '${next}': a value that starts with a dash is written ${flag}=${next}`
    }
    return `${flag} needs a value: ${flag} <value>`
  }
  if (flag !== undefined && error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const name = flag.replace(/^-+/, '').split('=')[0]!
    const near = closestFlag(name)
    return `Unknown option '${flag}'${near ? `; did you mean --${near}?` : ''}`
  }
  return error.message
    .split('\n')[0]!
    .replace(/\. To specify a positional.*$/, '')
}

/** The known flag nearest to `name` by edit distance, if it is close. */
function closestFlag(name: string): string | undefined {
  let best: string | undefined
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1
  for (const flag of Object.keys(PARSE_ARGS_OPTIONS)) {
    const distance = editDistance(name, flag)
    if (distance < bestDistance) {
      best = flag
      bestDistance = distance
    }
  }
  return best
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      )
    }
    previous = current
  }
  return previous[b.length]!
}

/**
 * The store a server was given, as its output names it (with its namespace
 * when not the default, without a password), or null for none.
 *
 * @example
 * storeShown({ url: 'redis://:pw@cache:6379/0', namespace: 'team' }) // 'redis://:***@cache:6379/0 (namespace team)'
 */
function storeShown(
  store: string | { url: string; namespace?: string } | undefined,
): string | null {
  if (store === undefined) return null
  if (typeof store === 'string') return redactUrl(store)
  return store.namespace === undefined
    ? redactUrl(store.url)
    : `${redactUrl(store.url)} (namespace ${store.namespace})`
}

/**
 * What the data a server started with holds beyond its limits (a data file
 * or store filled under higher ones), one sentence each: the sandbox takes
 * it all, and refuses each create past a limit with `409 limit_reached`.
 *
 * @example
 * limitsExceeded(server.sandbox, FLAG_NAMING) // ['holds 12000 customers in the account acct_…, more than --limits customersPerAccount=10000 …']
 */
function limitsExceeded(sandbox: SandboxCore, naming: OptionNaming): string[] {
  const { limits } = sandbox.options
  const { db } = sandbox
  const records =
    db.accounts.count() +
    db.apiKeys.count() +
    db.customers.count() +
    db.tokens.count()
  const over: string[] = []
  const refused = (option: string, what: string): string =>
    `${what}: every create past it answers 409 limit_reached until records are deleted, the sandbox is reset, or ${naming.name(option)} is raised.`
  if (db.accounts.count() > limits.accounts)
    over.push(
      refused(
        'limits.accounts',
        `holds ${db.accounts.count()} accounts, more than ${naming.set('limits.accounts', limits.accounts)} allows`,
      ),
    )
  if (records > limits.records)
    over.push(
      refused(
        'limits.records',
        `holds ${records} records, more than ${naming.set('limits.records', limits.records)} allows`,
      ),
    )
  for (const [kind, option, max] of [
    ['customers', 'limits.customersPerAccount', limits.customersPerAccount],
    ['tokens', 'limits.tokensPerAccount', limits.tokensPerAccount],
  ] as const) {
    const held = new Map<string, number>()
    for (const record of db[kind].findMany())
      held.set(record.account_id, (held.get(record.account_id) ?? 0) + 1)
    const full = [...held].filter(([, count]) => count > max)
    if (full.length === 0) continue
    const [account, most] = full.reduce((a, b) => (b[1] > a[1] ? b : a))
    over.push(
      refused(
        option,
        `holds more ${kind} than ${naming.set(option, max)} allows in ${full.length === 1 ? 'the account' : `${full.length} accounts, the most (${most}) in`} ${account}${full.length === 1 ? ` (${most})` : ''}`,
      ),
    )
  }
  return over
}
