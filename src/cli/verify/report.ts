// verify's report: the table and the summary it prints.
import type { styleText } from 'node:util'
import type { VerifyReport } from './index.ts'
import type { PlannedRequest } from './transport.ts'

type Paint = (format: Parameters<typeof styleText>[0], text: string) => string

const COLOURS = {
  matches: 'green',
  differs: 'yellow',
  unknown: 'gray',
} as const

/**
 * `1 request`, `2 requests`: a count with its noun in the right number.
 *
 * @example
 * counted(1, 'recorded exchange') // '1 recorded exchange'
 */
export function counted(n: number, noun: string): string {
  return `${n} ${n === 1 ? noun : `${noun}s`}`
}

const plural = (n: number, one: string, many: string): string =>
  n === 1 ? one : many

/**
 * The report as a terminal table: one line per ledger row, what differs
 * under it, then the totals.
 *
 * @example
 * stdout.write(formatReport(report, (_, text) => text))
 */
export function formatReport(
  report: VerifyReport,
  paint: Paint = (_, text) => text,
  width = 120,
): string {
  const idWidth = Math.max(...report.rows.map((row) => row.id.length))
  const clip = (text: string, room: number): string =>
    text.length > room ? `${text.slice(0, Math.max(10, room - 1))}…` : text
  const room = Math.max(30, width - idWidth - 14)
  const out = [
    `Assumptions checked against ${report.target}`,
    '',
    `  ${'ledger row'.padEnd(idWidth)}  ${'verdict'.padEnd(8)}  what the service did`,
  ]
  for (const row of report.rows) {
    out.push(
      `  ${row.id.padEnd(idWidth)}  ${paint(COLOURS[row.verdict], row.verdict.padEnd(8))}  ${clip(row.observed, room)}`,
    )
    if (row.verdict === 'differs') {
      out.push(
        `  ${''.padEnd(idWidth)}  ${''.padEnd(8)}  ${paint('gray', clip(`sandbox: ${row.expected}`, room))}`,
      )
    }
  }
  const { matches, differs, unknown } = report.summary
  out.push(
    '',
    `${matches} ${plural(matches, 'matches', 'match')}, ${differs} ${plural(differs, 'differs', 'differ')}, ${unknown} unknown. ${report.coverage.probed} of the ${report.coverage.observable} rows with an observable effect are ${report.offline ? 'judged' : 'probed'}.`,
    report.offline
      ? `${counted(report.offline.exchanges, 'recorded exchange')} replayed offline; nothing was sent to the service and no record was created.`
      : `${counted(report.requests, 'request')} sent to ${report.host}, ${counted(report.creates, 'record')} created there${report.creates > 0 ? ` (each tagged "${report.tag}" in its name or email)` : ''}.`,
  )
  for (const { flag, suggested } of report.budget ?? [])
    out.push(
      paint(
        'yellow',
        `${flag} ran out before every row was probed: run again with ${flag} ${suggested} to probe the rest.`,
      ),
    )
  const inexpressible = report.rows.filter(
    (row) => row.verdict === 'differs' && row.inexpressible,
  )
  if (inexpressible.length > 0) {
    out.push('', 'No option makes the sandbox do what the service does here:')
    for (const row of inexpressible)
      out.push(`  ${row.id}: ${row.inexpressible}`)
  }
  if (report.stopped)
    out.push('', paint('yellow', `Stopped early: this report is partial.`))
  if (report.failed)
    out.push('', paint('red', `The service misbehaved: ${report.failed}`))
  if (report.nothingCompared)
    out.push(
      '',
      paint(
        'red',
        `Nothing could be compared with the sandbox, so nothing passed: ${report.nothingCompared}.`,
      ),
    )
  return `${out.join('\n')}\n`
}

/**
 * The report as JSON for `--json`: everything but the request log.
 *
 * @example
 * JSON.parse(formatJson(report)).summary.differs
 */
export function formatJson(report: VerifyReport): string {
  const { log: _log, ...rest } = report
  return `${JSON.stringify(rest, null, 2)}\n`
}

/**
 * The requests of a dry run, numbered, secrets masked.
 *
 * @example
 * stdout.write(formatPlan(report.log))
 */
export function formatPlan(log: readonly PlannedRequest[]): string {
  const lines = log.map(
    (r, i) =>
      `${String(i + 1).padStart(3)}. ${r.method} ${r.url}  ${r.purpose}\n     ${Object.entries(
        r.headers,
      )
        .map(([k, v]) => `${k}: ${v}`)
        .join('; ')}\n     ${r.body}`,
  )
  return `${lines.join('\n')}\n\n${log.length} requests if the service behaves as the sandbox does; where it differs, verify adds requests to find the service's bound (within --max-requests and --max-creates). Nothing was sent.\n`
}
