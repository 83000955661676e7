// Runs once: every server here names its own store.
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import { readDataFile } from '../src/model/data-file.ts'
import { createSandbox } from '../src/index.ts'
import { runCli, tempFolder } from './_servers.ts'

// `KILL_RUNS=100 npx vitest run test/data-file-kill.test.ts` for the long run.
const RUNS = Number(process.env.KILL_RUNS ?? 12)

/** Creates customers from `workers` concurrent loops until `stop()` is called. */
function burst(url: string, workers: number) {
  const acks: string[] = []
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
          acks.push(id)
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
  'keeps every acknowledged write through repeated SIGKILLs, with no grace window',
  async () => {
    const folder = await tempFolder('cts-kill-')
    const file = join(folder, 'data.json')
    let checked = 0
    let lost = 0
    let loadable = 0
    for (let run = 0; run < RUNS; run++) {
      const cli = runCli([
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
      // The last run's lock and temporary files are taken over and cleaned.
      expect(
        (await readdir(folder)).filter((name) => name.endsWith('.tmp')),
      ).toEqual([])
      const load = burst(listening.url, 4)
      // Kill at a different moment each run: inside and between syncs.
      await new Promise((resolve) =>
        setTimeout(resolve, 150 + ((run * 97) % 500)),
      )
      cli.child.kill('SIGKILL')
      expect(await cli.exited).toBe('SIGKILL')
      await load.stop()

      // Every 201 counts, up to the instant of the kill.
      const data = await readDataFile(file)
      const sandbox = createSandbox({ customersPerAccount: 0 })
      await sandbox.load(data)
      loadable++
      for (const id of load.acks) {
        checked++
        if (!sandbox.customers.get(id)) lost++
      }
    }
    console.log(
      `kill test: ${RUNS} SIGKILLs, ${loadable} files loadable, ${checked} acknowledged writes checked, ${lost} lost`,
    )
    expect(loadable).toBe(RUNS)
    expect(lost).toBe(0)
    expect(checked).toBeGreaterThan(0)
  },
  RUNS * 5000 + 30_000,
)
