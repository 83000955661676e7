// Runs once: every server here names its own store.
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../../fixtures/demo-keys.ts'
import { readDataFile } from '../../src/model/data-file.ts'
import { createSandbox } from '../../src/index.ts'
import {
  createFiller,
  startCli,
  tempDataFile,
  tempFolder,
} from '../_servers.ts'

// A real full disk without root: under `ulimit -f` every write past the size
// fails with EFBIG (Node ignores SIGXFSZ), as ENOSPC does on a full disk.
const LIMIT_KB = 48

/** Starts the CLI whose files may not grow past `LIMIT_KB`, and waits for its URL. */
const startLimited = (file: string) =>
  startCli(
    ['--port', '0', '--quiet', '--customers', '5', '--data-file', file],
    { fileSizeLimitKb: LIMIT_KB },
  )

/** Creates customers from `workers` loops until `total` answers came back. */
async function fill(url: string, total: number, workers = 8) {
  const stored: string[] = []
  const refused: { status: number; code: string; retryAfter: string | null }[] =
    []
  let next = 0
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < total) {
        const response = await createFiller(url, next++)
        const body = (await response.json()) as { id: string; code: string }
        if (response.status === 201) stored.push(body.id)
        else
          refused.push({
            status: response.status,
            code: body.code,
            retryAfter: response.headers.get('retry-after'),
          })
      }
    }),
  )
  return { stored, refused }
}

const health = async (url: string) => {
  const response = await fetch(`${url}/__sandbox/health`)
  return { status: response.status, body: await response.json() }
}

it(
  'answers 503 storage_unavailable for every write a full disk refuses, and every 201 is in the data file afterwards',
  { timeout: 30_000 },
  async () => {
    const folder = await tempFolder('cts-full-')
    const file = join(folder, 'data.json')
    const server = await startLimited(file)
    expect((await health(server.url)).status).toBe(200)

    const { stored, refused } = await fill(server.url, 400)
    expect(stored.length).toBeGreaterThan(0)
    expect(refused.length).toBeGreaterThan(0)
    for (const answer of refused) {
      expect(answer).toEqual({
        status: 503,
        code: 'storage_unavailable',
        retryAfter: '5',
      })
    }
    const degraded = await health(server.url)
    expect(degraded.status).toBe(503)
    expect(degraded.body).toMatchObject({
      status: 'degraded',
      storage: { code: 'EFBIG' },
    })
    // The refused records are gone from memory too.
    const state = await (await fetch(`${server.url}/__sandbox/state`)).json()
    const inMemory = new Set(state.customers.map((c: { id: string }) => c.id))
    expect(stored.every((id) => inMemory.has(id))).toBe(true)
    expect(
      state.customers.filter((c: { name: string }) =>
        c.name.startsWith('Filler'),
      ).length,
    ).toBe(stored.length)

    // The refused request's Idempotency-Key is free again: a retry is not a replay.
    for (let attempt = 0; attempt < 2; attempt++) {
      const retry = await fetch(`${server.url}/v1/customers`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${DEMO_KEY_ONE}`,
          'content-type': 'application/json',
          'idempotency-key': 'full-disk-retry',
        },
        body: JSON.stringify({ name: 'X'.repeat(200), email: 'x@example.com' }),
      })
      expect(retry.status).toBe(503)
      expect(retry.headers.get('idempotent-replayed')).toBeNull()
    }

    expect(await server.stop()).toBe(0)
    expect(server.stderr()).toMatch(/Failed to write the data file .*EFBIG/)
    // Once per outage (a shorter line may still fit and end one), not once
    // per refused write.
    expect(server.stderr().match(/Failed to write/g)!.length).toBeLessThan(
      refused.length / 4,
    )
    expect(server.stderr()).not.toMatch(/\n\s+at /)
    // No half line and no temporary file is left behind.
    expect((await readFile(file)).at(-1)).toBe(0x0a)
    expect(await readdir(folder)).toEqual(['data.json'])

    const data = (await readDataFile(file)) as {
      customers: { id: string; name: string }[]
    }
    await createSandbox({ customersPerAccount: 0 }).load(data)
    const onDisk = new Set(data.customers.map((c) => c.id))
    expect(stored.filter((id) => !onDisk.has(id))).toEqual([])
    expect(
      data.customers.filter((c) => c.name.startsWith('Filler')).length,
    ).toBe(stored.length)
  },
)

it(
  'turns health back to ok once a write succeeds again',
  { timeout: 30_000 },
  async () => {
    const server = await startLimited(await tempDataFile('cts-full-'))
    const { refused } = await fill(server.url, 400)
    expect(refused.length).toBeGreaterThan(0)
    expect((await health(server.url)).status).toBe(503)

    // A reset stores a small snapshot, which fits.
    const reset = await fetch(`${server.url}/__sandbox/reset`, {
      method: 'POST',
    })
    expect(reset.status).toBe(200)
    expect(await health(server.url)).toEqual({
      status: 200,
      body: { status: 'ok' },
    })
    expect((await createFiller(server.url, 1)).status).toBe(201)
  },
)
