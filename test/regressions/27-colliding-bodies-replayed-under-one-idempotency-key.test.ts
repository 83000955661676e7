// Runs once: every server here names its own store.
import { readFile, writeFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { hashString } from '../../src/_utils.ts'
import { createSandbox } from '../../src/index.ts'
import { postCustomer } from '../_requests.ts'
import { startServer, tempDataFile } from '../_servers.ts'

// Found by an outside tester: a body's fingerprint under its
// Idempotency-Key was a 53-bit hash (cyrb53) and its length, which a small
// cycle-finding program made collide in seconds. The second of two such
// bodies under one key was answered 201 `Idempotent-Replayed: true` with the
// first body's customer, and its own was never made; the contract says
// `422 idempotency_key_reused`. Fingerprints are SHA-256 now; a key kept by
// an earlier version is still compared as it was, so a retry across an
// upgrade replays.

const FIRST = { name: '1c637c14ae61e0', email: 'a@b.co' }
const COLLIDING = { name: '1bcb9101faf965', email: 'a@b.co' }

it('refuses a second body whose old fingerprint collides with the first', async () => {
  // The pair collides under the fingerprint of before: the test has teeth.
  expect(hashString(JSON.stringify(COLLIDING))).toBe(
    hashString(JSON.stringify(FIRST)),
  )
  const sandbox = createSandbox({ seed: 1, customersPerAccount: 0 })
  const key = { headers: { 'idempotency-key': 'collide-1' } }
  const send = { ...key, fetch: sandbox.fetch }
  const first = await postCustomer('http://sandbox.test', FIRST, send)
  expect(first.status).toBe(201)
  const second = await postCustomer('http://sandbox.test', COLLIDING, send)
  expect(second.status).toBe(422)
  expect(second.headers.get('idempotent-replayed')).toBeNull()
  expect(((await second.json()) as { code: string }).code).toBe(
    'idempotency_key_reused',
  )
  // The same body still replays.
  const again = await postCustomer('http://sandbox.test', FIRST, send)
  expect(again.status).toBe(201)
  expect(again.headers.get('idempotent-replayed')).toBe('true')
  expect(await again.json()).toEqual(await first.json())
  expect(sandbox.customers.list().map(({ name }) => name)).toEqual([FIRST.name])
})

it('replays a key that an earlier version kept, with its fingerprint of then', async () => {
  const dataFile = await tempDataFile()
  const before = await startServer({ seed: 1, dataFile })
  const key = { headers: { 'idempotency-key': 'upgrade-1' } }
  const first = await postCustomer(before.url, FIRST, key)
  expect(first.status).toBe(201)
  await before.close()
  // The data file as an earlier version wrote it: cyrb53 and the length.
  const text = await readFile(dataFile, 'utf8')
  expect(text).toMatch(/"fingerprint":"sha256:[^"]+"/)
  await writeFile(
    dataFile,
    text.replace(
      /"fingerprint":"sha256:[^"]+"/,
      `"fingerprint":"${hashString(JSON.stringify(FIRST))}"`,
    ),
  )

  const after = await startServer({ seed: 1, dataFile })
  const retry = await postCustomer(after.url, FIRST, key)
  expect(retry.status).toBe(201)
  expect(retry.headers.get('idempotent-replayed')).toBe('true')
  expect(await retry.json()).toEqual(await first.json())
  const other = await postCustomer(after.url, { ...FIRST, name: 'Other' }, key)
  expect(other.status).toBe(422)
})
