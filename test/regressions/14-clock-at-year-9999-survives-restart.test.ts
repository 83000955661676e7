// Runs once: every server here names its own store.
import { copyFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { startServer, tempFolder } from '../_servers.ts'

it('loads again a token minted with the clock near 9999-12-31, and the clock with it', async () => {
  const folder = await tempFolder('cts-9999-')
  const file = join(folder, 'data.json')
  const first = await startServer({ dataFile: file })
  const clock = await fetch(`${first.url}/__sandbox/clock`, {
    method: 'POST',
    body: JSON.stringify({ now: '9999-12-31T22:00:00Z' }),
  })
  expect(clock.status).toBe(200)
  const minted = await fetch(`${first.url}/v2/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${DEMO_KEY_ONE}` },
    body: JSON.stringify({ scopes: ['customers:write'], expires_in: 3600 }),
  })
  expect(minted.status).toBe(201)
  const token = await minted.json()
  expect(token.expires_at).toBe('9999-12-31T23:00:00.000Z')
  // A copy taken now holds what a kill -9 would leave: what each answer
  // waited for, without the snapshot that closing writes.
  const copy = join(folder, 'copy.json')
  await copyFile(file, copy)

  const second = await startServer({ dataFile: copy })
  expect(second.loadedFromFile).toBe(true)
  expect(second.sandbox.tokens.get(token.id)).toMatchObject({
    expires_at: '9999-12-31T23:00:00.000Z',
  })
  expect(second.sandbox.clock.now().toISOString()).toBe(
    '9999-12-31T22:00:00.000Z',
  )
  const created = await fetch(`${second.url}/v1/customers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token.token}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name: 'Late', email: 'late@example.com' }),
  })
  expect(created.status).toBe(201)
})
