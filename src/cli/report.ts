/**
 * Reports an error that no caller caused (a bug in the sandbox) in one line,
 * with the request id to look it up by; the stack only when `SANDBOX_DEBUG=1`
 * is in the environment (the CLI's `--debug` sets it). A user's input never
 * prints a stack trace.
 *
 * @example
 * reportUnexpected(error, 'req_0123456789abcdef')
 * // customer-token-sandbox: internal error answering req_0123456789abcdef: TypeError: x is undefined
 */
export function reportUnexpected(error: unknown, requestId?: string): void {
  const debug =
    (globalThis as { process?: { env?: Record<string, string | undefined> } })
      .process?.env?.SANDBOX_DEBUG === '1'
  const name = error instanceof Error ? error.name : 'Error'
  const message =
    error instanceof Error ? error.message : String(error).slice(0, 500)
  const where = requestId === undefined ? '' : ` answering ${requestId}`
  const line = `customer-token-sandbox: internal error${where}: ${name}: ${message.split('\n')[0]!.slice(0, 300)}`
  console.error(
    debug && error instanceof Error && error.stack
      ? `${line}\n${error.stack}`
      : `${line}${debug ? '' : ' (SANDBOX_DEBUG=1 or --debug shows the stack)'}`,
  )
}
