import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository's root, as a path. */
export const REPO: string = fileURLToPath(new URL('..', import.meta.url))

/** README.md and every page under docs/, from the repository's root. */
export async function markdownFiles(): Promise<string[]> {
  const pages = (await readdir(join(REPO, 'docs'), { recursive: true }))
    .filter((file) => file.endsWith('.md'))
    .map((file) => join('docs', file))
    .toSorted()
  return ['README.md', ...pages]
}

/** A fenced code block of a page: its language, first line and text. */
export interface CodeBlock {
  file: string
  /** The line of the opening fence, from 1. */
  line: number
  lang: string
  code: string
}

/** Every fenced code block of `text`. */
export function codeBlocks(file: string, text: string): CodeBlock[] {
  const blocks: CodeBlock[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!)
    if (!open) continue
    const end = lines.findIndex((line, j) => j > i && line === '```')
    if (end === -1)
      throw new Error(`${file}:${i + 1}: a code block never closes`)
    blocks.push({
      file,
      line: i + 1,
      lang: open[1]!,
      code: lines.slice(i + 1, end).join('\n'),
    })
    i = end
  }
  return blocks
}

/** The package's entries, mapped to their sources. */
export const PACKAGE_ENTRIES: Record<string, string> = {
  'customer-token-sandbox': 'src/index.ts',
  'customer-token-sandbox/node': 'src/runtimes/node-entry.ts',
  'customer-token-sandbox/browser': 'src/runtimes/browser.ts',
  'customer-token-sandbox/vite': 'src/runtimes/vite.ts',
  'customer-token-sandbox/playwright': 'src/runtimes/playwright.ts',
  'customer-token-sandbox/fixtures': 'src/fixtures.ts',
  'customer-token-sandbox/contract': 'src/contract.ts',
}
