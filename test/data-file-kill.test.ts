import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import { createSandbox } from '../src/index.ts'
import { spawnCli } from './_spawn.ts'

// `KILL_RUNS=100 npx vitest run test/data-file-kill.test.ts` for the long run.
const RUNS = Number(process.env.KILL_RUNS ?? 12)

interface Ack {
  id: string
  at: number
}

/** Creates customers from `workers` concurrent loops until `stop()` is called. */
function burst(url: string, workers: number) {
  const acks: Ack[] = []
  const state = { stopped: false }
  let n = 0
  const loop = async (): Promise<void> => {
    while (!state.stopped) {
      try {
        const response = await fetch(`${url}/v1/customers`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${DEMO_KEY_ONE}`,
            'content-type': 'application/json',
          },
          body: JSON.stringify({
            name: `Burst ${n}`,
            email: `burst${n++}@example.com`,
          }),
        })
        if (response.status === 201) {
          const { id } = (await response.json()) as { id: string }
          acks.push({ id, at: Date.now() })
        }
      } catch {
        return // the server was killed
      }
    }
  }
  const done = Promise.all(Array.from({ length: workers }, loop))
  return {
    acks,
    stop: async () => {
      state.stopped = true
      await done
    },
  }
}

it(
  'keeps every write acknowledged before the last completed flush through repeated SIGKILLs',
  async () => {
    const folder = await mkdtemp(join(tmpdir(), 'cts-kill-'))
    const file = join(folder, 'data.json')
    let checked = 0
    let lost = 0
    let loadable = 0
    try {
      for (let run = 0; run < RUNS; run++) {
        const cli = spawnCli([
          '--port',
          '0',
          '--log-format',
          'json',
          '--customers',
          '5',
          '--data-file',
          file,
        ])
        const listening = JSON.parse(
          (await cli.waitFor(/^\{.*"event":"listening".*\}$/m))[0],
        )
        const load = burst(listening.url, 4)
        // Kill at a different moment each run: inside and between flushes.
        await new Promise((resolve) =>
          setTimeout(resolve, 150 + ((run * 97) % 500)),
        )
        cli.child.kill('SIGKILL')
        expect(await cli.exited).toBe('SIGKILL')
        await load.stop()

        const flushes = cli
          .stdout()
          .split('\n')
          .filter((line) => line.includes('"event":"flush"'))
          .map((line) => JSON.parse(line) as { snapshot_at: number })
        const data: unknown = JSON.parse(await readFile(file, 'utf8'))
        const sandbox = createSandbox({ customersPerAccount: 0 })
        await sandbox.load(data)
        loadable++
        const lastFlush = flushes.at(-1)
        if (lastFlush) {
          for (const ack of load.acks) {
            if (ack.at >= lastFlush.snapshot_at) continue
            checked++
            if (!sandbox.customers.get(ack.id)) lost++
          }
        }
      }
      console.log(
        `kill test: ${RUNS} SIGKILLs, ${loadable} files loadable, ${checked} acknowledged writes checked, ${lost} lost`,
      )
      expect(loadable).toBe(RUNS)
      expect(lost).toBe(0)
      expect(checked).toBeGreaterThan(0)
    } finally {
      await rm(folder, { recursive: true, force: true })
    }
  },
  RUNS * 5000 + 30_000,
)
