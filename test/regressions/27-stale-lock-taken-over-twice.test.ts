import { spawn } from 'node:child_process'
import {
  lstat,
  lutimes,
  readFile,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { lockDataFile } from '../../src/model/data-file.ts'
import { tempDataFile } from '../_servers.ts'

// Servers that start together on a data file whose lock a dead server left
// all judged it dead. Each removed the lock it found and made its own, so
// one could remove the lock another had just made: two servers held the
// data file, and the writes of the one whose file the other's start
// replaced were lost. One of them takes the lock over now; the others are
// refused as starting beside a running server.

const dataFile = fileURLToPath(
  new URL('../../src/model/data-file.ts', import.meta.url),
)

/** Starts a process that takes the lock at `at` (ms), holds it 3 s and says how it went. */
function contender(file: string, at: number) {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `const { lockDataFile } = await import(${JSON.stringify(dataFile)})
      while (Date.now() < ${at});
      try {
        const lock = await lockDataFile(${JSON.stringify(file)})
        console.log('held')
        await new Promise((resolve) => setTimeout(resolve, 3000))
        await lock.release()
      } catch (error) {
        console.log(/is in use by another sandbox server/.test(error.message) ? 'refused' : error.message)
      }`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk))
  return new Promise<string>((resolve) =>
    child.once('exit', () => resolve(out.trim())),
  )
}

it("lets one of several servers take over a dead server's lock at the same moment, and refuses the others", async () => {
  for (let round = 0; round < 3; round++) {
    const file = await tempDataFile('cts-takeover-')
    // A lock of a server in another container that stopped refreshing it.
    await writeFile(
      `${file}.lock`,
      `1 other-host 4026531836 0badc0de ${Math.floor(Date.now() / 1000) - 60}`,
    )
    const old = new Date(Date.now() - 60_000)
    await utimes(`${file}.lock`, old, old)
    const at = Date.now() + 2500
    const outcomes = await Promise.all(
      Array.from({ length: 4 }, () => contender(file, at)),
    )
    expect(outcomes.toSorted()).toEqual([
      'held',
      'refused',
      'refused',
      'refused',
    ])
  }
}, 60_000)

it("takes over a dead server's lock when a server killed while taking it over left its guard", async () => {
  const file = await tempDataFile('cts-takeover-')
  await writeFile(
    `${file}.lock`,
    `1 other-host 4026531836 0badc0de ${Math.floor(Date.now() / 1000) - 60}`,
  )
  await symlink('2 other-host 4026531836 0badc0de 0', `${file}.lock.takeover`)
  const old = new Date(Date.now() - 60_000)
  await utimes(`${file}.lock`, old, old)
  await lutimes(`${file}.lock.takeover`, old, old)
  const lock = await lockDataFile(file)
  expect((await readFile(`${file}.lock`, 'utf8')).split(' ')[0]).toBe(
    String(process.pid),
  )
  await lock.release()
  await expect(lstat(`${file}.lock.takeover`)).rejects.toThrow(/ENOENT/)
}, 30_000)
