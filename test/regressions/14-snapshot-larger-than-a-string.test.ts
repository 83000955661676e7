import { createReadStream } from 'node:fs'
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { expect, it } from 'vitest'
import { writeSnapshot } from '../../src/model/data-file.ts'
import {
  SANDBOX_DATA_FORMAT,
  SANDBOX_DATA_VERSION,
  type SandboxData,
} from '../../src/model/schemas.ts'
import { tempFolder } from '../_servers.ts'

// V8's longest string on 64-bit: the whole state as one JSON.stringify
// failed here with "Invalid string length".
const MAX_STRING = 2 ** 29 - 24

it('writes a snapshot larger than the longest string without "Invalid string length"', async () => {
  const folder = await tempFolder('cts-huge-')
  const file = join(folder, 'data.json')
  // 530 customers of about 1 MB each (one shared string in memory).
  const name = `${' '.repeat(1_040_000)}a`
  const data: SandboxData = {
    format: SANDBOX_DATA_FORMAT,
    version: SANDBOX_DATA_VERSION,
    seed: 1,
    clock: { now: '2026-01-01T00:00:00.000Z', frozen: false },
    accounts: [],
    api_keys: [],
    customers: Array.from({ length: 530 }, (_, i) => ({
      id: `cus_${String(i).padStart(14, '0')}`,
      account_id: 'acct_DemoAccount001',
      name,
      email: `big${i}@example.com`,
      created_at: '2026-01-01T00:00:00.000Z',
    })),
    tokens: [],
  }
  const bytes = await writeSnapshot(file, data)
  expect(bytes).toBeGreaterThan(MAX_STRING)
  expect((await stat(file)).size).toBe(bytes)
  expect(await readdir(folder)).toEqual(['data.json'])

  // One line per record after the snapshot's head; the last one whole.
  let lines = 0
  let last = ''
  for await (const line of createInterface({
    input: createReadStream(file),
    crlfDelay: Infinity,
  })) {
    lines++
    last = line
  }
  expect(lines).toBe(1 + 530)
  expect(JSON.parse(last).customer.id).toBe('cus_00000000000529')
}, 120_000)
