import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import packageJson from '../package.json' with { type: 'json' }
import { createOpenApiDocument } from '../handlers/document.ts'
import type { SandboxCore } from '../src/index.ts'

type Json = Record<string, any>

interface Checker {
  document: Json
  ajv: Ajv2020
  validators: Map<string, ValidateFunction>
}

const checkers = new Map<string, Checker>()

const keyOf = (sandbox: SandboxCore): string =>
  JSON.stringify(sandbox.options, (_, value) =>
    typeof value === 'function' ? value.name || 'fn' : value,
  )

function checkerFor(sandbox: SandboxCore): Checker {
  const key = keyOf(sandbox)
  let checker = checkers.get(key)
  if (!checker) {
    const document = createOpenApiDocument(sandbox.options, packageJson.version)
    const ajv = new Ajv2020({ strict: false, allErrors: true })
    addFormats.default(ajv)
    ajv.addSchema({ $id: 'openapi', ...document })
    checker = { document, ajv, validators: new Map() }
    checkers.set(key, checker)
  }
  return checker
}

// Headers of HTTP itself, of CORS and of a browser's framing rules (the
// server's on its admin surface), which no operation declares.
const GENERIC_HEADERS =
  /^(?:content-type|content-length|date|connection|keep-alive|transfer-encoding|vary|access-control-.*|content-security-policy|x-frame-options)$/

const escape = (part: string): string =>
  part.replace(/~/g, '~0').replace(/\//g, '~1')

/**
 * Fails when a response strays from the OpenAPI document of the sandbox that
 * gave it: an undocumented status, content type or header, or a body that
 * does not match its schema. Every response the contract suite receives
 * passes through it.
 *
 * @example
 * await checkResponse(sandbox, 'POST', '/v1/customers', response)
 */
export async function checkResponse(
  sandbox: SandboxCore,
  method: string,
  url: URL,
  response: Response,
): Promise<void> {
  if (response.type === 'error') return
  const { document, ajv, validators } = checkerFor(sandbox)
  const prefix = sandbox.options.baseUrl?.pathname.replace(/\/+$/, '') ?? ''
  let path = url.pathname
  if (prefix && path.startsWith(`${prefix}/`)) path = path.slice(prefix.length)
  const where = `${method} ${url.pathname} → ${response.status}`
  if (!response.headers.get('x-request-id')?.startsWith('req_')) {
    throw new Error(`${where}: no X-Request-Id header`)
  }
  // @note A plain OPTIONS is HTTP's own question (RFC 9110, section 9.3.7),
  // which the document leaves out: its answer is the path's Allow, no body.
  if (method === 'OPTIONS' && response.status === 204) {
    if (!response.headers.get('allow')?.includes('OPTIONS'))
      throw new Error(`${where}: no Allow header listing OPTIONS`)
    if ((await response.clone().text()) !== '')
      throw new Error(`${where}: a body`)
    return
  }
  const operation = document.paths[path]?.[method.toLowerCase()]
  let pointer: string
  let spec: Json | undefined
  if (operation) {
    const status = String(response.status)
    const name = operation.responses[status] ? status : 'default'
    spec = operation.responses[name]
    if (!spec) throw new Error(`${where}: status ${status} is not documented`)
    pointer = `#/paths/${escape(path)}/${method.toLowerCase()}/responses/${name}`
  } else {
    // 404/405 and unknown paths: problem JSON is all the document can promise.
    if (response.status < 400)
      throw new Error(`${where}: success on an undocumented operation`)
    pointer = '#/components/schemas/Problem'
  }
  if (spec) {
    const declared = new Set(
      Object.keys(spec.headers ?? {}).map((name) => name.toLowerCase()),
    )
    for (const [name] of response.headers) {
      if (!GENERIC_HEADERS.test(name) && !declared.has(name)) {
        throw new Error(`${where}: header ${name} is not documented`)
      }
    }
  }
  const text = await response.clone().text()
  const media = response.headers.get('content-type')?.split(';')[0]?.trim()
  if (spec && !spec.content) {
    if (text !== '')
      throw new Error(`${where}: a body where none is documented`)
    return
  }
  if (spec && (media === undefined || !spec.content[media])) {
    throw new Error(
      `${where}: content type ${String(media)} is not documented (${Object.keys(spec.content).join(', ')})`,
    )
  }
  if (!spec && media !== 'application/problem+json') {
    throw new Error(
      `${where}: expected application/problem+json, got ${String(media)}`,
    )
  }
  const schemaPointer = spec
    ? `${pointer}/content/${escape(media!)}/schema`
    : pointer
  let validate = validators.get(schemaPointer)
  if (!validate) {
    validate = ajv.compile({ $ref: `openapi${schemaPointer}` })
    validators.set(schemaPointer, validate)
  }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new Error(`${where}: the body is not JSON: ${text.slice(0, 200)}`)
  }
  if (!validate(body)) {
    throw new Error(
      `${where}: the body strays from the document: ${ajv.errorsText(validate.errors)}\n${text.slice(0, 500)}`,
    )
  }
}
