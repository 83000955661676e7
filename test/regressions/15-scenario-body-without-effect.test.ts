import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { expect, it } from 'vitest'
import { inProcess, send } from '../_targets.ts'

const BODIES = [
  [{ operation: '*' }, false],
  [{ operation: '*', network_error: false }, false],
  [{ operation: '*', times: 2 }, false],
  [{ operation: '*', network_error: true }, true],
  [{ operation: 'createToken', status: 503 }, true],
  [{ operation: 'createCustomer', delay_ms: 0 }, true],
] as const

for (const path of ['/__sandbox/scenarios', '/__sandbox/account/scenarios']) {
  it(`refuses a scenario that does nothing on ${path} in the document as the server does`, async () => {
    const client = await inProcess.start()
    const document = (await send(client, 'GET', '/openapi.json')).body
    const ajv = new Ajv2020({ strict: false })
    addFormats.default(ajv)
    const validate = ajv.compile(
      document.paths[path].post.requestBody.content['application/json'].schema,
    )
    for (const [body, accepted] of BODIES) {
      expect(validate(body), JSON.stringify(body)).toBe(accepted)
      const { status } = await send(client, 'POST', path, { body })
      expect(status, JSON.stringify(body)).toBe(accepted ? 201 : 422)
    }
  })
}
