import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { inProcess, send } from '../_targets.ts'

it('never quotes a full API key sent as a scope, masking it in the 422', async () => {
  const client = await inProcess.start()
  const { status, text } = await send(client, 'POST', '/v2/tokens', {
    body: { scopes: [DEMO_KEY_ONE] },
  })
  expect(status).toBe(422)
  expect(text).not.toContain(DEMO_KEY_ONE)
  expect(text).toContain('sk_test_…0001')
})

it('lists one problem once when it raises two issues (expires_in: 1e20)', async () => {
  const client = await inProcess.start()
  const { status, body } = await send(client, 'POST', '/v2/tokens', {
    body: { scopes: ['customers:read'], expires_in: 1e20 },
  })
  expect(status).toBe(422)
  expect(body.errors).toHaveLength(1)
  expect(body.errors[0]).toMatchObject({
    field: 'expires_in',
    pointer: '/expires_in',
  })
})
