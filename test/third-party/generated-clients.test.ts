import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createClient as generateHeyApi } from '@hey-api/openapi-ts'
import openapiTS, { astToString } from 'openapi-typescript'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../src/fixtures.ts'
import {
  createSandboxServer,
  type SandboxServer,
} from '../../src/runtimes/node.ts'

// Issue 15: clients generated from the served document by tools the sandbox
// did not write, in their default settings, compiled under `strict` and run
// in the natural call style against a started server.
const run = promisify(execFile)
const require = createRequire(import.meta.url)
const TSC = require.resolve('typescript/bin/tsc')
const NODE_MODULES = fileURLToPath(
  new URL('../../node_modules', import.meta.url),
)

const OPENAPI_FETCH_CLIENT = `import createClient from 'openapi-fetch'
import type { paths } from './openapi-typescript/api.js'

const [baseUrl, key] = process.argv.slice(2) as [string, string]
const client = createClient<paths>({
  baseUrl,
  headers: { Authorization: \`Bearer \${key}\` },
})

const customer = await client.POST('/v1/customers', {
  body: { name: 'Ada Lovelace', email: 'ada@example.com' },
})
if (!customer.data) throw new Error(JSON.stringify(customer.error))
const id: string = customer.data.id

const token = await client.POST('/v2/tokens', {
  body: { scopes: ['customers:read'] },
})
if (!token.data) throw new Error(JSON.stringify(token.error))
const expiresAt: string = token.data.expires_at

const simulated = await client.POST('/v1/customers', {
  body: { name: 'Ada Lovelace', email: 'ada@example.com' },
  params: { header: { 'X-Sandbox-Scenario': 'status=422' } },
})
// Compiles only while the document lists the code a scenario answers with.
const simulatedCode = simulated.error?.code === 'simulated_failure' ? simulated.error.code : null

console.log(JSON.stringify({
  id,
  customerStatus: customer.response.status,
  tokenStatus: token.response.status,
  expiresIn: token.data.expires_in,
  expiresAt,
  simulatedStatus: simulated.response.status,
  simulatedCode,
}))
`

const HEY_API_CLIENT = `import { client } from './hey-api/client.gen.js'
import { createCustomer, createToken, setClock } from './hey-api/sdk.gen.js'

const [baseUrl, key] = process.argv.slice(2) as [string, string]
client.setConfig({ baseUrl, auth: key })

const customer = await createCustomer({
  body: { name: 'Ada Lovelace', email: 'ada@example.com' },
})
if (!customer.data) throw new Error(JSON.stringify(customer.error))
const id: string = customer.data.id

const token = await createToken({ body: { scopes: ['customers:read'] } })
if (!token.data) throw new Error(JSON.stringify(token.error))
const expiresAt: string = token.data.expires_at

const simulated = await createToken({
  body: { scopes: ['customers:read'] },
  headers: { 'X-Sandbox-Scenario': 'status=401' },
})
const simulatedCode = simulated.error?.code === 'simulated_failure' ? simulated.error.code : null

// The sandbox's own operations have short operationIds (issue 28).
const clock = await setClock({ body: { advance_seconds: 0 } })
if (!clock.data) throw new Error(JSON.stringify(clock.error))

console.log(JSON.stringify({
  id,
  customerStatus: customer.response.status,
  tokenStatus: token.response?.status,
  clockStatus: clock.response?.status,
  expiresIn: token.data.expires_in,
  expiresAt,
  simulatedStatus: simulated.response?.status,
  simulatedCode,
  challenge: simulated.response?.headers.get('www-authenticate'),
}))
`

// What `tsc --init` writes, strict and skipping the checks of libraries'
// own .d.ts files; every generated file is a .ts file, so all are checked.
const TSCONFIG = {
  compilerOptions: {
    strict: true,
    skipLibCheck: true,
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    types: ['node'],
    outDir: 'out',
  },
  include: ['*.ts', 'openapi-typescript', 'hey-api'],
}

let server: SandboxServer
let dir: string

beforeAll(async () => {
  server = await createSandboxServer({ port: 0, seed: 1, playground: false })
  dir = await mkdtemp(join(tmpdir(), 'sandbox-generated-clients-'))
  await symlink(NODE_MODULES, join(dir, 'node_modules'), 'dir')
})

afterAll(async () => {
  await server?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

it('generates openapi-typescript and @hey-api/openapi-ts clients from the served document, compiles them under strict and creates a customer and a token with only scopes', async () => {
  const served = `http://127.0.0.1:${server.port}/openapi.json`
  const document = await (await fetch(served)).text()
  await writeFile(join(dir, 'openapi.json'), document)
  // openapi-typescript reads the served document itself, as its CLI does.
  const ast = await openapiTS(new URL(served))
  await mkdir(join(dir, 'openapi-typescript'))
  await writeFile(join(dir, 'openapi-typescript', 'api.ts'), astToString(ast))
  await generateHeyApi({
    input: join(dir, 'openapi.json'),
    output: join(dir, 'hey-api'),
    logs: { level: 'silent' },
  })
  await writeFile(join(dir, 'openapi-fetch-client.ts'), OPENAPI_FETCH_CLIENT)
  await writeFile(join(dir, 'hey-api-client.ts'), HEY_API_CLIENT)
  await writeFile(join(dir, 'package.json'), '{"type":"module"}\n')
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG))

  const compiled = await run(process.execPath, [TSC, '-p', dir]).catch(
    (error: { stdout: string }) => ({ stdout: error.stdout, failed: true }),
  )
  expect(compiled.stdout).toBe('')

  const base = `http://127.0.0.1:${server.port}`
  const before = server.sandbox.customers.count()
  const fetchClient = JSON.parse(
    (
      await run(process.execPath, [
        join(dir, 'out', 'openapi-fetch-client.js'),
        base,
        DEMO_KEY_ONE,
      ])
    ).stdout,
  )
  expect(fetchClient).toMatchObject({
    id: expect.stringMatching(/^cus_/),
    customerStatus: 201,
    tokenStatus: 201,
    expiresIn: 3600,
    simulatedStatus: 422,
    simulatedCode: 'simulated_failure',
  })
  const heyApi = JSON.parse(
    (
      await run(process.execPath, [
        join(dir, 'out', 'hey-api-client.js'),
        base,
        DEMO_KEY_ONE,
      ])
    ).stdout,
  )
  expect(heyApi).toMatchObject({
    id: expect.stringMatching(/^cus_/),
    customerStatus: 201,
    tokenStatus: 201,
    expiresIn: 3600,
    simulatedStatus: 401,
    simulatedCode: 'simulated_failure',
    clockStatus: 200,
    challenge: expect.stringMatching(/^Bearer realm="sandbox"/),
  })
  expect(server.sandbox.customers.count()).toBe(before + 2)
}, 120_000)
