import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { pathToFileURL } from 'node:url'
import {
  findBreakingChanges,
  hasBreakingChangeset,
  RELEASED_DOCUMENT,
} from '../scripts/openapi-diff.ts'
import { renderOpenApi } from '../scripts/openapi.ts'

// Issue 28: the document does not move under its clients' feet. Each case
// breaks a copy of the current document the way a careless change would,
// and the check must refuse it.
type Json = Record<string, any>

const current = (): Json => JSON.parse(renderOpenApi())
let released: Json
let dir: string

beforeAll(async () => {
  released = JSON.parse(
    await readFile(new URL(`../${RELEASED_DOCUMENT}`, import.meta.url), 'utf8'),
  )
  dir = await mkdtemp(join(tmpdir(), 'sandbox-openapi-diff-'))
})

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

/** Renames a component schema and every reference to it. */
const renameSchema = (document: Json, from: string, to: string): Json => {
  const { [from]: schema, ...others } = document.components.schemas
  return JSON.parse(
    JSON.stringify({
      ...document,
      components: {
        ...document.components,
        schemas: { ...others, [to]: schema },
      },
    }).replaceAll(
      `"#/components/schemas/${from}"`,
      `"#/components/schemas/${to}"`,
    ),
  )
}

it('finds no breaking change from the released document to the current one', () => {
  expect(findBreakingChanges(released, current())).toEqual([])
})

it('fails on a renamed schema', () => {
  const broken = renameSchema(current(), 'CreateTokenRequest', 'TokenRequest')
  expect(findBreakingChanges(released, broken).join('\n')).toMatch(
    /components\/schemas\/CreateTokenRequest/,
  )
})

it('fails on a removed operation', () => {
  const broken = current()
  delete broken.paths['/__sandbox/latency'].delete
  expect(findBreakingChanges(released, broken)).toContain(
    '[Removed] operation DELETE /__sandbox/latency',
  )
})

it('fails on a renamed operationId', () => {
  const broken = current()
  broken.paths['/v1/customers'].post.operationId = 'addCustomer'
  expect(findBreakingChanges(released, broken)).toHaveLength(1)
})

it('fails on a removed required response field, a removed request enum value and a removed status', () => {
  const noEmail = current()
  const customer = noEmail.components.schemas.Customer
  customer.required = customer.required.filter((f: string) => f !== 'email')
  expect(findBreakingChanges(released, noEmail).join('\n')).toMatch(
    /required status from `email`/,
  )

  const fewerScopes = current()
  fewerScopes.components.schemas.CreateTokenRequest.properties.scopes.items.enum.pop()
  expect(findBreakingChanges(released, fewerScopes).join('\n')).toMatch(
    /possible values of `scopes\[\]`/,
  )

  const no409 = current()
  delete no409.paths['/v1/customers'].post.responses['409']
  expect(findBreakingChanges(released, no409)).toContain(
    '[Removed] Response 409',
  )
})

it('fails on a field gone from a request body, which the server then refuses as unknown', () => {
  const broken = current()
  const body = broken.components.schemas.CreateCustomerRequest
  delete body.properties.email
  body.required = ['name']
  expect(findBreakingChanges(released, broken)).toContain(
    '[Removed] property `email` in Request Body content (application/json)',
  )
})

it('fails on an error code gone from the answers, which generated clients type as a union', () => {
  const broken = current()
  const code = broken.components.schemas.Problem.properties.code
  code.enum = code.enum.filter((value: string) => value !== 'email_taken')
  expect(findBreakingChanges(released, broken).join('\n')).toMatch(
    /possible values of `code`|Problem\/properties\/code\/enum/,
  )
})

it('passes an added operation and a changed description', () => {
  const grown = current()
  grown.info.description = 'Another description.'
  grown.paths['/__sandbox/ping'] = {
    get: {
      operationId: 'ping',
      responses: { '204': { description: 'Up.' } },
    },
  }
  expect(findBreakingChanges(released, grown)).toEqual([])
})

it('exits non-zero and names the change when the script runs on a copy with a renamed schema and a removed operation', async () => {
  const broken = renameSchema(current(), 'Customer', 'Client')
  delete broken.paths['/__sandbox/clock'].post
  const file = join(dir, 'openapi.json')
  await writeFile(file, JSON.stringify(broken))
  const result = await new Promise<{ code: number | null; stderr: string }>(
    (resolve) => {
      const child = execFile(
        process.execPath,
        ['--import', 'tsx', 'scripts/openapi-diff.ts', RELEASED_DOCUMENT, file],
        { cwd: fileURLToPath(new URL('..', import.meta.url)) },
        (_, __, stderr) => resolve({ code: child.exitCode, stderr }),
      )
    },
  )
  expect(result.code).toBe(1)
  expect(result.stderr).toContain('components/schemas/Customer')
  expect(result.stderr).toContain('[Removed] operation POST /__sandbox/clock')
}, 60_000)

it('moves the baseline only under a pending changeset with a breaking bump (minor before 1.0)', async () => {
  const folder = pathToFileURL(join(dir, 'changesets/'))
  await mkdir(folder, { recursive: true })
  expect(await hasBreakingChangeset(folder)).toBe(false)
  const changeset = (bump: string) =>
    `---\n'customer-token-sandbox': ${bump}\n---\n\nWhat changed.\n`
  await writeFile(new URL('fix.md', folder), changeset('patch'))
  expect(await hasBreakingChangeset(folder)).toBe(false)
  await writeFile(new URL('break.md', folder), changeset('minor'))
  expect(await hasBreakingChangeset(folder)).toBe(true)
})
