import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import fc from 'fast-check'
import { getResponse } from 'msw'
import { beforeAll, expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { DEMO_KEY_ONE } from '../../src/fixtures.ts'

// Issue 15: requests generated from the served document's own request
// schemas, valid ones and one-mutation invalid ones, and every answer checked
// against the same document. The document's verdict on a request (Ajv 2020
// with formats) must be the server's: what it accepts is created, what it
// refuses is a 422, and each answer is a declared status whose body matches.
const RUNS = {
  seed: Number(process.env.FUZZ_SEED ?? 20_261_122),
  numRuns: Number(process.env.FUZZ_RUNS ?? 200),
}
// About 20 ms a run on a loaded 2-core machine; `npm run fuzz` runs 12,500.
const TIMEOUT_MS = Math.max(60_000, RUNS.numRuns * 100)

type Json = Record<string, any>
const escape = (part: string): string =>
  part.replace(/~/g, '~0').replace(/\//g, '~1')
const codePoints = (text: string): number => [...text].length

let sandbox: ReturnType<typeof createSandbox>
let document: Json
let ajv: Ajv2020
let fullToken = ''
const validators = new Map<string, ValidateFunction>()

function validator(pointer: string): ValidateFunction {
  let validate = validators.get(pointer)
  if (!validate) {
    validate = ajv.compile({ $ref: `openapi${pointer}` })
    validators.set(pointer, validate)
  }
  return validate
}

const send = async (path: string, init: RequestInit): Promise<Response> => {
  const response = await getResponse(
    sandbox.handlers,
    new Request(new URL(path, 'http://sandbox.test'), init),
  )
  if (!response) throw new Error(`No handler answered ${path}`)
  return response
}

beforeAll(async () => {
  // Stores big enough for `npm run fuzz`: a full store is a 409 the body
  // schemas cannot foresee.
  sandbox = createSandbox({
    seed: 1,
    limits: {
      customersPerAccount: 1_000_000,
      tokensPerAccount: 1_000_000,
      records: 10_000_000,
    },
    idempotency: { maxEntries: 1_000_000, maxEntriesPerAccount: 1_000_000 },
  })
  await sandbox.ready
  document = await (await send('/openapi.json', {})).json()
  ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  ajv.addSchema({ $id: 'openapi', ...document })
  const minted = await send('/v2/tokens', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      scopes: ['customers:write', 'tokens:write'],
      expires_in: 86_400,
    }),
  })
  fullToken = (await minted.json()).token
})

/** Values a string schema allows, from its own bounds and pattern. */
function stringsFor(schema: Json): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0
  const max = Math.min(schema.maxLength ?? 40, 300)
  const within = fc.string({ unit: 'grapheme', minLength: min, maxLength: max })
  if (!schema.pattern) return within
  return fc.oneof(
    { arbitrary: within, weight: 1 },
    {
      arbitrary: fc
        .stringMatching(new RegExp(schema.pattern, 'u'))
        .filter((s) => codePoints(s) >= min && codePoints(s) <= max),
      weight: 4,
    },
  )
}

/** Strings one step outside a string schema: its bounds, its pattern, the format. */
function nearStrings(schema: Json): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0
  const max = schema.maxLength ?? 40
  const choices: fc.WeightedArbitrary<string>[] = [
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        ' ',
        '\u200B',
        '\u200B\uFEFF\u2060',
        '\t\n',
        'a'.repeat(max),
        'a'.repeat(max + 1),
        `${'a'.repeat(Math.max(0, max - 12))}@example.com`,
        `${'a'.repeat(Math.max(0, max - 11))}@example.com`,
      ),
    },
    {
      weight: 1,
      arbitrary: fc.string({
        minLength: Math.max(0, min - 1),
        maxLength: max + 1,
      }),
    },
  ]
  if (schema.format === 'email' || schema.pattern?.includes('@')) {
    choices.push(
      { weight: 1, arbitrary: fc.emailAddress() },
      {
        weight: 6,
        arbitrary: fc
          .tuple(
            fc.constantFrom(
              'a',
              'a.b',
              '.a',
              'a.',
              'a..b',
              "o'",
              "o'x",
              'A_B+c',
              'é',
              '"a b"',
              'a!b',
            ),
            fc.constantFrom(
              'example.com',
              'example-.com',
              '-example.com',
              'ex-ample.co',
              'example.c',
              'example.c0m',
              'example',
              'EXAMPLE.ORG',
              '[127.0.0.1]',
              '127.0.0.1',
              `${'a'.repeat(63)}.com`,
              `${'a'.repeat(64)}.com`,
              `example.${'a'.repeat(63)}`,
              `example.${'a'.repeat(64)}`,
              'sub.example-x.dev',
              'exa_mple.com',
              'exämple.com',
            ),
          )
          .map(([local, domain]) => `${local}@${domain}`),
      },
    )
  }
  return fc.oneof(...choices)
}

/** Bodies the document's object schema describes, each field from its own schema. */
function validBodies(schema: Json): fc.Arbitrary<Json> {
  const fields: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [name, property] of Object.entries<Json>(schema.properties)) {
    if (property.type === 'string') fields[name] = stringsFor(property)
    else if (property.type === 'integer')
      fields[name] = fc.integer({
        min: property.minimum,
        max: property.maximum,
      })
    else if (property.type === 'array')
      fields[name] = fc.subarray(property.items.enum, {
        minLength: property.minItems,
        maxLength: Math.min(property.maxItems, property.items.enum.length),
      })
  }
  return fc.record(fields, { requiredKeys: schema.required ?? [] })
}

/** One mutation of a valid body: a field dropped, added, retyped or pushed past its bounds. */
function nearBodies(schema: Json): fc.Arbitrary<unknown> {
  const names = Object.keys(schema.properties)
  const field = fc.constantFrom(...names)
  return validBodies(schema).chain((body) =>
    fc.oneof(
      { weight: 4, arbitrary: nearValues(schema, body, field) },
      field.map((name) => {
        const { [name]: _, ...rest } = body
        return rest
      }),
      fc
        .constantFrom('id', 'extra', '__proto__', 'Name')
        .map((name) => ({ ...body, [name]: 1 })),
      fc
        .tuple(
          field,
          fc.constantFrom(null, true, 1.5, '3600', [], {}, -1, 1e21),
        )
        .map(([name, value]) => ({ ...body, [name]: value })),
      fc.constantFrom([], 'text', 1, null),
    ),
  )
}

/** A valid body with one field pushed just past (or onto) the edge of its schema. */
function nearValues(
  schema: Json,
  body: Json,
  field: fc.Arbitrary<string>,
): fc.Arbitrary<unknown> {
  return field.chain((name) => {
    const property = schema.properties[name]
    let values: fc.Arbitrary<unknown>
    if (property.type === 'string') values = nearStrings(property)
    else if (property.type === 'integer')
      values = fc.constantFrom(
        property.minimum - 1,
        property.minimum,
        property.maximum,
        property.maximum + 1,
        property.minimum + 0.5,
        0,
      )
    else
      values = fc.oneof(
        fc.constant([]),
        fc.array(
          fc.constantFrom(
            ...property.items.enum,
            'invoices:read',
            'customers',
            '',
          ),
          {
            maxLength: property.maxItems + 2,
          },
        ),
      )
    return values.map((value) => ({ ...body, [name]: value }))
  })
}

const OPERATIONS = [
  {
    path: '/v1/customers',
    credentials: () => [DEMO_KEY_ONE, fullToken],
    count: () => sandbox.customers.count(),
  },
  // @note A token may mint only a lifetime within its own, a rule of the
  // authorization, not of the body: the API key mints here.
  {
    path: '/v2/tokens',
    credentials: () => [DEMO_KEY_ONE],
    count: () => sandbox.tokens.list().length,
  },
] as const

let counter = 0

for (const operation of OPERATIONS) {
  it(
    `agrees with the document on every generated ${operation.path} request: valid ones are created, invalid ones refused, every answer declared`,
    async () => {
      const spec = document.paths[operation.path].post
      const pointer = `#/paths/${escape(operation.path)}/post`
      // The body is a named component: generate from it, validate by it.
      const bodyName = spec.requestBody.content['application/json'].schema.$ref
        .split('/')
        .pop()
      const bodySchema = document.components.schemas[bodyName]
      const validBody = validator(`#/components/schemas/${bodyName}`)
      const keyParameter = spec.parameters.findIndex(
        (p: Json) => p.name === 'Idempotency-Key',
      )
      const validKey = validator(`${pointer}/parameters/${keyParameter}/schema`)
      const tally = { accepted: 0, refused: 0, simulated: 0 }
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(validBodies(bodySchema), nearBodies(bodySchema)),
          fc.constantFrom(...operation.credentials()),
          fc.constantFrom(
            'application/json',
            'application/json; charset=utf-8',
          ),
          fc.oneof(
            { arbitrary: fc.constant(undefined), weight: 4 },
            // Valid keys are new each time: a key sent again is a replay.
            fc.constantFrom('fresh', 'long', 'x'.repeat(256), '', 'café'),
          ),
          fc.oneof(
            { arbitrary: fc.constant(undefined), weight: 6 },
            fc.constantFrom(
              'status=400',
              'status=401',
              'status=403',
              'status=409',
              'status=413',
              'status=415',
              'status=422',
              'status=429',
              'status=500',
              'status=503',
              'status=418',
              'delay_ms=0',
            ),
          ),
          async (body, credential, type, key, scenario) => {
            const idempotencyKey =
              key === 'fresh'
                ? `k${++counter}`
                : key === 'long'
                  ? `k${++counter}`.padEnd(255, '~')
                  : key
            const headers: Record<string, string> = {
              authorization: `Bearer ${credential}`,
              'content-type': type,
            }
            if (idempotencyKey !== undefined)
              headers['idempotency-key'] = idempotencyKey
            if (scenario !== undefined) headers['x-sandbox-scenario'] = scenario
            const before = operation.count()
            const response = await send(operation.path, {
              method: 'POST',
              headers,
              body: JSON.stringify(body),
            })
            const status = String(response.status)
            const text = await response.text()
            const where = `${operation.path} ${JSON.stringify(headers)} ${JSON.stringify(body)} → ${status} ${text}`
            const simulated = scenario?.startsWith('status=')
            const declared = spec.responses[status]
            if (!simulated) expect(declared, where).toBeDefined()
            const name = declared ? status : 'default'
            const media = response.headers.get('content-type')!.split(';')[0]!
            expect(spec.responses[name].content[media], where).toBeDefined()
            const answer = validator(
              `${pointer}/responses/${name}/content/${escape(media)}/schema`,
            )
            expect(
              answer(JSON.parse(text)),
              `${where}\n${ajv.errorsText(answer.errors)}`,
            ).toBe(true)
            const created = operation.count() - before
            if (simulated) {
              expect(JSON.parse(text).code, where).toBe('simulated_failure')
              expect(created, where).toBe(0)
              tally.simulated++
              return
            }
            const documentValid =
              validBody(body) &&
              (idempotencyKey === undefined || validKey(idempotencyKey))
            if (documentValid) {
              expect(
                status,
                `the document accepts, the server refuses: ${where}`,
              ).toBe('201')
              expect(created, where).toBe(1)
              tally.accepted++
            } else {
              expect(
                response.status,
                `the document refuses, the server does not: ${where}\n${ajv.errorsText(validBody.errors)}`,
              ).toBeGreaterThanOrEqual(400)
              expect(status, where).toMatch(/^(400|422)$/)
              expect(created, where).toBe(0)
              tally.refused++
            }
          },
        ),
        RUNS,
      )
      // Both verdicts were reached, so the property tested both directions.
      expect(tally.accepted).toBeGreaterThan(0)
      expect(tally.refused).toBeGreaterThan(0)
    },
    TIMEOUT_MS,
  )
}
