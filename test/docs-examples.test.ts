import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import ts from 'typescript'
import { expect, it } from 'vitest'
import { USAGE } from '../src/cli/cli.ts'
import { RECORD_USAGE, VERIFY_USAGE } from '../src/cli/verify/cli.ts'
import {
  codeBlocks,
  markdownFiles,
  PACKAGE_ENTRIES,
  REPO,
  type CodeBlock,
} from './_docs.ts'

// Every code block of README.md and docs/ is checked here: TypeScript is
// type-checked against the sources, as a consumer importing the package
// would compile it; a shell line that runs the CLI may use only the flags
// its --help lists; text blocks are the generated usage, checked by
// test/docs.test.ts. A block in any other language fails, so none goes
// unchecked.

const blocks: CodeBlock[] = []
for (const file of await markdownFiles())
  blocks.push(...codeBlocks(file, await readFile(join(REPO, file), 'utf8')))

const where = (block: CodeBlock): string => `${block.file}:${block.line}`

it('checks every code block: ts, sh and generated text only', () => {
  const unchecked = blocks
    .filter((block) => !['ts', 'sh', 'text'].includes(block.lang))
    .map((block) => `${where(block)} (${block.lang || 'no language'})`)
  expect(unchecked).toEqual([])
  expect(blocks.filter((block) => block.lang === 'ts').length).toBeGreaterThan(
    10,
  )
})

// What the snippets take as given: a test file's sandbox, a response it
// got, a Playwright page, Vitest's globals and the code under test.
const PRELUDE = `
import type { Sandbox } from 'customer-token-sandbox'
import type { Page } from '@playwright/test'
declare global {
  const sandbox: Sandbox
  const response: Response
  const page: Page
  const it: typeof import('vitest').it
  const expect: typeof import('vitest').expect
  const vi: typeof import('vitest').vi
  function createCustomerWithRetry(body: { name: string; email: string }): Promise<unknown>
}
export {}
`

it('type-checks every TypeScript block against the sources', () => {
  const virtual = new Map<string, string>()
  const folder = join(REPO, '.docs-examples')
  virtual.set(join(folder, 'prelude.d.ts'), PRELUDE)
  const names = new Map<string, CodeBlock>()
  for (const block of blocks.filter((b) => b.lang === 'ts')) {
    const name = join(
      folder,
      `${block.file.replace(/[/.]/g, '_')}_${block.line}.ts`,
    )
    // Each block is a module of its own, so their names never clash.
    virtual.set(name, `${block.code}\nexport {}\n`)
    names.set(name, block)
  }
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2023,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: true,
    noEmit: true,
    allowImportingTsExtensions: true,
    resolveJsonModule: true,
    types: ['node'],
    paths: Object.fromEntries(
      Object.entries(PACKAGE_ENTRIES).map(([entry, file]) => [
        entry,
        [join(REPO, file)],
      ]),
    ),
  }
  const host = ts.createCompilerHost(options)
  const { fileExists, readFile: read, getSourceFile } = host
  host.fileExists = (file) => virtual.has(file) || fileExists.call(host, file)
  host.readFile = (file) => virtual.get(file) ?? read.call(host, file)
  host.getSourceFile = (file, language, ...rest) => {
    const text = virtual.get(file)
    return text === undefined
      ? getSourceFile.call(host, file, language, ...rest)
      : ts.createSourceFile(file, text, language)
  }
  const program = ts.createProgram([...virtual.keys()], options, host)
  const problems = ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file && virtual.has(d.file.fileName))
    .map((d) => {
      const block = names.get(d.file!.fileName)
      const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0)
      const at = block
        ? `${block.file}:${block.line + 1 + line}`
        : d.file!.fileName
      return `${at}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
    })
  expect(problems).toEqual([])
}, 120_000)

const FLAGS: Record<string, string> = {
  '': USAGE,
  verify: VERIFY_USAGE,
  record: RECORD_USAGE,
}

it('runs the CLI in shell blocks with flags its --help lists', () => {
  const unknown: string[] = []
  for (const block of blocks.filter((b) => b.lang === 'sh')) {
    for (const line of block.code.split('\n')) {
      const command =
        /(?:^|\s)customer-token-sandbox(?:\s+(verify|record)\b)?(.*)/.exec(
          line.replace(/#.*$/, ''),
        )
      if (!command) continue
      const usage = FLAGS[command[1] ?? '']!
      for (const [flag] of command[2]!.matchAll(/--[a-z][a-z0-9-]*/g))
        if (!new RegExp(`${flag}(?![\\w-])`).test(usage))
          unknown.push(`${where(block)}: ${flag}`)
    }
  }
  expect(unknown).toEqual([])
})
