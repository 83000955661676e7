// The errors the request path throws, and the one place they become answers.
import {
  ERROR_CODES,
  PROBLEM_TYPE_BASE,
  problemJson,
  type ErrorCode,
  type ErrorFormatter,
  type FieldError,
  type Problem,
} from '../model/problems.ts'

// The request path's callers take the problem format from here, with the errors.
export {
  ERROR_CODES,
  PROBLEM_TYPE_BASE,
  STATUS_TEXT,
  problemJson,
  type ErrorCode,
  type ErrorFormatter,
  type FieldError,
  type Problem,
} from '../model/problems.ts'

/** A header an error answer carries, by its HTTP name. */
export type AnswerHeader =
  | 'WWW-Authenticate'
  | 'Retry-After'
  | 'Accept-Post'
  | 'Accept-Encoding'
  | 'RateLimit'
  | 'RateLimit-Policy'

/**
 * What one step of a route can answer with: each code with the headers
 * its answer carries. The OpenAPI document is derived from these.
 */
export type Throws = Partial<Record<ErrorCode, readonly AnswerHeader[]>>

/**
 * An error that becomes an HTTP answer: the pipeline catches it once and
 * renders it through the configured error format.
 *
 * @example
 * throw new SandboxError('invalid_json', 'The request body is not valid JSON.')
 */
export class SandboxError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly errors: FieldError[] | undefined
  readonly errorsOmitted: number
  readonly headers: Record<string, string>

  constructor(
    code: ErrorCode,
    detail: string,
    init: {
      errors?: FieldError[]
      errorsOmitted?: number
      headers?: Record<string, string>
      status?: number
    } = {},
  ) {
    // @note An answer, not a fault: capturing a stack was most of the cost
    // of a 4xx, and nobody reads it (internal errors keep their own stacks).
    const stackTraceLimit = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    super(detail)
    Error.stackTraceLimit = stackTraceLimit
    this.name = 'SandboxError'
    this.code = code
    this.status = init.status ?? ERROR_CODES[code].status
    this.errors = init.errors
    this.errorsOmitted = init.errorsOmitted ?? 0
    this.headers = init.headers ?? {}
  }

  /** The problem details of this error for one request. */
  toProblem(requestId: string): Problem {
    const problem: Problem = {
      type: PROBLEM_TYPE_BASE + this.code,
      title: ERROR_CODES[this.code].title,
      status: this.status,
      detail: this.message,
      code: this.code,
      request_id: requestId,
    }
    if (this.errors) problem.errors = this.errors
    if (this.errorsOmitted > 0) problem.errors_omitted = this.errorsOmitted
    return problem
  }

  /**
   * Renders this error for one request, adding its own headers. A format
   * that throws or returns no Response is said on stderr, and the problem
   * answered as problem JSON.
   */
  toResponse(requestId: string, format: ErrorFormatter): Response {
    const problem = this.toProblem(requestId)
    let response: Response | undefined
    // @note The format is the user's code: what it got wrong (a throw, a
    // promise, nothing) is not the request's failure, and on a server it
    // took the process down.
    try {
      response = format(problem)
      if (!(response instanceof Response))
        throw new TypeError(`errorFormat returned ${response}, not a Response`)
      // @note The router sets it: a Response whose headers no one may
      // change (Response.redirect()) fails here, not there, where nothing
      // catches. Deleted, not set: a refusal kept for replay keeps its
      // headers, and a replay would carry two ids.
      try {
        response.headers.delete('x-request-id')
      } catch {
        throw new TypeError(
          'errorFormat returned a Response whose headers cannot be set',
        )
      }
    } catch (error) {
      reportUnexpected(error, requestId)
      // A promise that rejects later would stop a Node process.
      Promise.resolve(response).catch(() => {})
      response = problemJson(problem)
    }
    for (const [name, value] of Object.entries(this.headers)) {
      response.headers.set(name, value)
    }
    return response
  }
}

/** The most field errors one answer lists; `errors_omitted` counts the rest. */
export const MAX_FIELD_ERRORS = 20

/**
 * A 422 `validation_failed` whose detail is built from its field errors. Past
 * `MAX_FIELD_ERRORS` the rest are only counted, so that a body of thousands of
 * bad fields gets an answer of a few KB; `more` counts problems for which no
 * field error was made at all (unknown keys past the first few).
 *
 * @example
 * throw validationError([{ field: 'name', code: 'required', message: 'name is required' }])
 */
export function validationError(all: FieldError[], more = 0): SandboxError {
  const errors = all.slice(0, MAX_FIELD_ERRORS)
  const count = all.length + more
  const omitted = count - errors.length
  // The detail quotes a few messages; errors[] carries the rest.
  const quoted = errors.slice(0, 3).map((e) => e.message)
  const detail =
    count === 1
      ? errors[0]!.message
      : `${count} problems: ${quoted.join('; ')}${count > quoted.length ? '; …' : ''}`
  return new SandboxError('validation_failed', detail, {
    errors,
    ...(omitted > 0 && { errorsOmitted: omitted }),
  })
}

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

/** The Retry-After of `storage_unavailable` and of a degraded health check. */
export const STORAGE_RETRY_AFTER_SECONDS = 5

/** How often a write is decided again when other replicas keep writing first. */
export const MAX_STORE_ATTEMPTS = 50

/**
 * The problem when other replicas of a fleet won every attempt of a write.
 *
 * @example
 * if (attempt >= MAX_STORE_ATTEMPTS) throw storeBusy()
 */
export function storeBusy(): SandboxError {
  return new SandboxError(
    'storage_unavailable',
    `Other replicas wrote first ${MAX_STORE_ATTEMPTS} times in a row, so this write was not stored and nothing was changed. Retry it.`,
    { headers: { 'retry-after': '1' } },
  )
}
