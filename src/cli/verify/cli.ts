// verify's and record's command lines: their flags, usage and exit codes.
import { rename, rm, stat, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { parseArgs, styleText } from 'node:util'
import type { CliIO, MainResult } from '../io.ts'
import { NAME, readConfig } from '../flags.ts'
import {
  DEFAULT_MAX_BODY,
  explainWriteError,
  parseByteSize,
} from '../bounded-body.ts'
import { readSessionFile } from '../../model/session-file.ts'
import { counted, formatJson, formatPlan, formatReport } from './report.ts'
import { DEFAULT_MAX_CREATES } from './transport.ts'

export const VERIFY_USAGE = `Usage: ${NAME} verify --target URL --key KEY [options]
       ${NAME} verify --from SESSION.json [--config FILE] [--json]

Holds the sandbox's assumptions (GET /__sandbox/assumptions) against a live
implementation of the two operations, and says for each ledger row whether the
service matches, differs or is unknown. Only POST /v1/customers and
POST /v2/tokens are called; each created customer's name (or email) carries a tag.

  --target URL          the service's base URL (the paths /v1/customers and /v2/tokens are added)
  --key KEY             an API key of the service (env SANDBOX_VERIFY_KEY; never printed in full)
  --config FILE         the sandbox options to compare with (default: the defaults)
  --write-config FILE   write the options that make the sandbox behave as observed (for --config)
  --json                print the report as JSON
  --dry-run             list every request the battery sends, send nothing
  --max-requests N      at most N requests (default 200)
  --max-creates N       at most N records created, customers and tokens (default 40)
  --rate N              at most N requests per second, each redirect hop included (default 5)
  --timeout MS          time to wait for each answer (default 10000)
  --max-body SIZE       most bytes of one answer read, after decompression (default 8MB)
  --from FILE           compare a session that \`${NAME} record\` saved, offline
  -h, --help            show this help

Exit status: 0 every probed row matches, 1 some differ, 2 a usage mistake,
3 the service misbehaved (timed out, reset, 5xx, not JSON), 4 nothing could be
compared (the budget, redirects or the session gave no answer to judge),
130 stopped by Ctrl-C. A run that compares nothing writes no --write-config.
`

export const RECORD_USAGE = `Usage: ${NAME} record --target URL [options]

A pass-through proxy: point a client at it, and it forwards each call to the
live service and saves the exchanges, secrets masked, as a session file that
\`${NAME} --from FILE\` loads and \`${NAME} verify --from FILE\` compares offline.

  --target URL          the service's base URL
  --out FILE            the session file, one line appended per exchange; never an existing file
                        (default session.jsonl)
  --port N              port, 0 for a free one (default 4101)
  --host HOST           interface (default 127.0.0.1)
  --config FILE         sandbox options the session starts from (default: the defaults)
  --timeout MS          time to wait for each answer of the service (default 30000)
  --max-body SIZE       most bytes of one answer kept in the file, after decompression;
                        a larger one reaches the client and is kept as its headers and a note (default 8MB)
  --keep-secrets        keep the tokens the service mints, and the keys of --config's own
                        fixtures, in full, so that --from lets their holders in (off: they
                        are masked; the credential of each exchange always is)
  -h, --help            show this help

Stop with Ctrl-C or SIGTERM: calls in flight are ended and saved, and it
prints how many exchanges the file holds.
`

class UsageError extends Error {}

const int = (name: string, value: string | undefined, fallback: number) => {
  if (value === undefined) return fallback
  if (!/^\d{1,9}$/.test(value) || Number(value) === 0)
    throw new UsageError(
      `--${name} must be a positive whole number (got "${value}")`,
    )
  return Number(value)
}

const size = (name: string, value: string | undefined): number => {
  if (value === undefined) return DEFAULT_MAX_BODY
  const bytes = parseByteSize(value)
  if (bytes === undefined)
    throw new UsageError(
      `--${name} must be a size such as 8MB, 512KB or 1048576 (got "${value}")`,
    )
  return bytes
}

/** `text` with the user and password of any URL in it masked. */
const masked = (text: string): string =>
  text.replace(/(\/\/)[^/?#\s@]*@/g, '$1…@')

const url = (value: string | undefined): string => {
  if (value === undefined) throw new UsageError('--target URL is required')
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol))
    throw new UsageError(
      `--target must be an http(s) URL (got "${masked(value)}")`,
    )
  const parsed = new URL(value)
  // @note fetch refuses such a URL, and its error quoted it, password and all,
  // into the report, the session file and the client's 502.
  if (parsed.username || parsed.password)
    throw new UsageError(
      `--target must not hold a user name or password (got "${masked(value)}"): verify authenticates with --key, and record forwards the client's Authorization header`,
    )
  // @note The paths are appended to the text: after a query they became part
  // of it, and after a fragment they were dropped, so POSTs went to the base.
  if (parsed.search || parsed.hash || /[?#]/.test(value))
    throw new UsageError(
      `--target must be a base URL without a ?query or #fragment (got "${value}"): /v1/customers and /v2/tokens are added to it`,
    )
  return value
}

/** The target as printed, without its trailing slash. */
const shown = (target: string): string =>
  new URL(target).href.replace(/\/$/, '')

async function writeAtomically(path: string, text: string): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`
  try {
    await writeFile(temporary, text)
    await rename(temporary, path)
  } catch (error) {
    await rm(temporary, { force: true })
    // @note The rename never ran: the file at `path` is as it was.
    throw new Error(
      `cannot write --write-config ${path} (${explainWriteError(error)}); the file there is unchanged`,
      { cause: error },
    )
  }
}

/**
 * Refuses a --write-config path that the rename at the end could not take,
 * or should not: checked before the battery creates records on the service.
 * A device or a FIFO would be replaced by a file, as `/dev/null` is by root.
 *
 * @example
 * await checkWritablePath('observed.json') // a missing file in an existing folder: fine
 */
async function checkWritablePath(path: string): Promise<void> {
  const found = await stat(path).catch(() => undefined)
  if (found !== undefined && !found.isFile())
    throw new UsageError(
      `--write-config ${path} is not a regular file: give it the path of a JSON file to write (one there is replaced)`,
    )
  const folder = await stat(dirname(path)).catch(() => undefined)
  if (found === undefined && !folder?.isDirectory())
    throw new UsageError(
      `--write-config ${path}: the folder ${dirname(path)} does not exist`,
    )
}

async function loadConfig(path: string | undefined) {
  if (path === undefined) return {}
  try {
    return await readConfig(path)
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

/**
 * Runs `verify` or `record` with the arguments after the command's name.
 * Errors are printed as one line; none shows a stack trace.
 *
 * @example
 * const { exitCode } = await runCommand('verify', ['--target', url, '--key', key, '--json'], io)
 */
export async function runCommand(
  command: 'verify' | 'record',
  args: string[],
  io: CliIO,
): Promise<MainResult> {
  const usage = command === 'verify' ? VERIFY_USAGE : RECORD_USAGE
  try {
    return command === 'verify'
      ? await verify(args, io)
      : await record(args, io)
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`${NAME} ${command}: ${error.message}\n\n${usage}`)
      return { exitCode: 2 }
    }
    // @note Anything else is reported in one line, as the issue asks: no stack.
    io.stderr.write(`${NAME} ${command}: ${(error as Error).message}\n`)
    return { exitCode: 1 }
  }
}

function parse(
  args: string[],
  options: NonNullable<Parameters<typeof parseArgs>[0]>['options'],
) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false })
      .values
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0]!)
  }
}

async function verify(args: string[], io: CliIO): Promise<MainResult> {
  const values = parse(args, {
    target: { type: 'string' },
    key: { type: 'string' },
    config: { type: 'string' },
    'write-config': { type: 'string' },
    json: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    'max-requests': { type: 'string' },
    'max-creates': { type: 'string' },
    rate: { type: 'string' },
    timeout: { type: 'string' },
    'max-body': { type: 'string' },
    from: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  }) as Record<string, string | boolean | undefined>
  const str = (name: string) => values[name] as string | undefined
  if (values.help) {
    io.stdout.write(VERIFY_USAGE)
    return { exitCode: 0 }
  }
  const color =
    Boolean(io.stdout.isTTY) &&
    io.env.NO_COLOR === undefined &&
    io.env.FORCE_COLOR !== '0'
  const paint = (format: Parameters<typeof styleText>[0], text: string) =>
    color ? styleText(format, text) : text
  const config = await loadConfig(str('config'))

  if (str('from') !== undefined) {
    if (str('target') !== undefined || str('write-config') !== undefined)
      throw new UsageError(
        '--from compares a recorded session offline: it takes no --target and writes no config',
      )
    let session: unknown
    try {
      session = await readSessionFile(str('from')!, '--from')
    } catch (error) {
      throw new UsageError((error as Error).message)
    }
    const { verifyRecorded } = await import('./offline.ts')
    const report = await verifyRecorded(session, config)
    io.stdout.write(
      values.json
        ? formatJson(report)
        : formatReport(report, paint, io.stdout.columns),
    )
    return {
      exitCode: report.nothingCompared ? 4 : report.summary.differs > 0 ? 1 : 0,
    }
  }

  const target = url(str('target'))
  const key = str('key') ?? io.env.SANDBOX_VERIFY_KEY
  if (!key && !values['dry-run'])
    throw new UsageError('--key KEY (or SANDBOX_VERIFY_KEY) is required')
  const written = str('write-config')
  if (written !== undefined) await checkWritablePath(written)
  const controller = new AbortController()
  const interrupt = (): void => controller.abort()
  process.once('SIGINT', interrupt)
  const showProgress = Boolean(io.stdout.isTTY) && !values.json
  const { runVerify } = await import('./index.ts')
  let report
  try {
    report = await runVerify({
      target,
      key: key ?? 'sk_test_KeyNotGivenForDryRun0000',
      config,
      dryRun: values['dry-run'] === true,
      maxRequests: int('max-requests', str('max-requests'), 200),
      maxCreates: int('max-creates', str('max-creates'), DEFAULT_MAX_CREATES),
      rate: int('rate', str('rate'), 5),
      timeoutMs: int('timeout', str('timeout'), 10_000),
      maxBody: size('max-body', str('max-body')),
      signal: controller.signal,
      ...(showProgress && {
        onProgress: (sent: number, max: number, purpose: string) => {
          const width = 24
          const filled = Math.min(width, Math.round((sent / max) * width))
          io.stdout.write(
            `\r\x1b[2K${paint('cyan', '█'.repeat(filled))}${'░'.repeat(width - filled)} ${sent}/${max} ${purpose.slice(0, 60)}`,
          )
        },
      }),
    })
  } finally {
    process.removeListener('SIGINT', interrupt)
    if (showProgress) io.stdout.write('\r\x1b[2K')
  }
  report.target = shown(report.target.replace(/ \(dry run\)$/, ''))
  if (values['dry-run']) {
    io.stdout.write(
      values.json
        ? `${JSON.stringify({ dry_run: true, requests: report.log }, null, 2)}\n`
        : formatPlan(report.log),
    )
    return { exitCode: 0 }
  }
  io.stdout.write(
    values.json
      ? formatJson(report)
      : formatReport(report, paint, io.stdout.columns),
  )
  // @note A run that compared nothing learned nothing: writing would replace
  // a config learned earlier with the one it started from.
  if (written !== undefined && report.nothingCompared && !report.stopped) {
    if (!values.json)
      io.stdout.write(
        `\nDid not write ${written}: nothing was observed to write.\n`,
      )
  } else if (written !== undefined && !report.stopped) {
    await writeAtomically(
      written,
      `${JSON.stringify(report.config, null, 2)}\n`,
    )
    if (!values.json)
      io.stdout.write(
        `\nWrote ${written}: start the sandbox with --config ${written} to behave as observed.\n`,
      )
  }
  return {
    exitCode: report.stopped
      ? 130
      : report.failed
        ? 3
        : report.nothingCompared
          ? 4
          : report.summary.differs > 0
            ? 1
            : 0,
  }
}

async function record(args: string[], io: CliIO): Promise<MainResult> {
  const values = parse(args, {
    target: { type: 'string' },
    out: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    config: { type: 'string' },
    timeout: { type: 'string' },
    'max-body': { type: 'string' },
    'keep-secrets': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  }) as Record<string, string | boolean | undefined>
  const str = (name: string) => values[name] as string | undefined
  if (values.help) {
    io.stdout.write(RECORD_USAGE)
    return { exitCode: 0 }
  }
  const target = url(str('target'))
  const config = await loadConfig(str('config'))
  const port = str('port') === '0' ? 0 : int('port', str('port'), 4101)
  if (port > 65_535)
    throw new UsageError(`--port must be at most 65535 (got "${port}")`)
  const { startRecorder } = await import('../record.ts')
  const recorder = await startRecorder({
    target,
    file: str('out') ?? 'session.jsonl',
    port,
    host: str('host') ?? '127.0.0.1',
    config,
    timeoutMs: int('timeout', str('timeout'), 30_000),
    maxBody: size('max-body', str('max-body')),
    keepSecrets: values['keep-secrets'] === true,
    onError: (error) => io.stderr.write(`${NAME} record: ${error.message}\n`),
    onExchange: (exchange) =>
      io.stdout.write(
        `${exchange.request.method} ${exchange.request.path} ${exchange.response.status} ${exchange.duration_ms} ms${exchange.response.note ? ` (${exchange.response.note})` : ''}\n`,
      ),
  })
  io.stdout.write(
    `Recording ${shown(target)} through ${recorder.url} into ${recorder.file} (Ctrl-C stops)\n`,
  )
  return {
    recorder: {
      url: recorder.url,
      async close() {
        await recorder.close()
        const { count, reason } = recorder.unsaved
        io.stdout.write(
          `${counted(recorder.saved, 'exchange')} saved to ${recorder.file}${count > 0 ? `; ${count} answered but not saved (${reason})` : ''}\n`,
        )
      },
    },
  }
}
