import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { expect, it } from 'vitest'
import { inProcess, send } from '../_targets.ts'

const escape = (part: string): string =>
  part.replace(/~/g, '~0').replace(/\//g, '~1')

const OPERATIONS = [
  ['/v1/customers', { name: 'Ada', email: 'ada@example.com' }],
  ['/v2/tokens', { scopes: ['customers:read'] }],
] as const

for (const [path, body] of OPERATIONS) {
  it(`answers X-Sandbox-Scenario: status=N on ${path} with a body the document's schema for N allows, for every error status it declares`, async () => {
    const client = await inProcess.start()
    const document = (await send(client, 'GET', '/openapi.json')).body
    const ajv = new Ajv2020({ strict: false })
    addFormats.default(ajv)
    ajv.addSchema({ $id: 'openapi', ...document })
    const statuses = Object.keys(document.paths[path].post.responses).filter(
      (status) => /^[45]\d\d$/.test(status),
    )
    expect(statuses).toEqual(
      expect.arrayContaining([
        '400',
        '401',
        '403',
        '409',
        '413',
        '415',
        '422',
        '429',
        '503',
      ]),
    )
    for (const status of [...statuses, '418', '500']) {
      const answer = await send(client, 'POST', path, {
        body,
        headers: { 'x-sandbox-scenario': `status=${status}` },
      })
      expect(answer.status).toBe(Number(status))
      expect(answer.body.code).toBe('simulated_failure')
      const name = statuses.includes(status) ? status : 'default'
      const validate = ajv.compile({
        $ref: `openapi#/paths/${escape(path)}/post/responses/${name}/content/application~1problem+json/schema`,
      })
      expect(
        validate(answer.body),
        `${status}: ${ajv.errorsText(validate.errors)}`,
      ).toBe(true)
      if (statuses.includes(status)) {
        expect(
          document.paths[path].post.responses[status].description,
        ).toContain('`simulated_failure`')
      }
    }
  })
}

it('carries WWW-Authenticate on a simulated 401 and 403, as the real ones do', async () => {
  const client = await inProcess.start()
  const unauthorized = await send(client, 'POST', '/v1/customers', {
    body: { name: 'Ada', email: 'ada@example.com' },
    headers: { 'x-sandbox-scenario': 'status=401' },
  })
  expect(unauthorized.status).toBe(401)
  expect(unauthorized.headers.get('www-authenticate')).toBe(
    'Bearer realm="sandbox", error="invalid_token", error_description="Simulated by a sandbox scenario"',
  )
  const forbidden = await send(client, 'POST', '/v2/tokens', {
    body: { scopes: ['customers:read'] },
    headers: { 'x-sandbox-scenario': 'status=403' },
  })
  expect(forbidden.status).toBe(403)
  expect(forbidden.headers.get('www-authenticate')).toMatch(
    /^Bearer realm="sandbox", error="insufficient_scope"/,
  )
})
