import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe } from 'vitest'
import { codeBlocks, markdownFiles, PACKAGE_ENTRIES, REPO } from './_docs.ts'

// The blocks of README.md and docs/ that are whole Vitest files (they import
// from 'vitest') run here, each in a suite of its own so that their hooks
// (a server listening, a sandbox reset) stay theirs; the rest are
// type-checked by test/docs-examples.test.ts. They import the package by
// its name, which points here at the sources.
const folder = join(REPO, '.tmp', `docs-run-${process.pid}`)
await mkdir(folder, { recursive: true })
afterAll(() => rm(folder, { recursive: true, force: true }))

for (const file of await markdownFiles()) {
  const text = await readFile(join(REPO, file), 'utf8')
  for (const block of codeBlocks(file, text)) {
    if (block.lang !== 'ts' || !/from 'vitest'/.test(block.code)) continue
    const code = block.code.replace(
      /from '(customer-token-sandbox(?:\/\w+)?)'/g,
      (_, entry: string) => `from '${join(REPO, PACKAGE_ENTRIES[entry]!)}'`,
    )
    const path = join(folder, `${file.replace(/[/.]/g, '_')}_${block.line}.ts`)
    await writeFile(path, code)
    describe(`${file}:${block.line}`, async () => {
      await import(path)
    })
  }
}
