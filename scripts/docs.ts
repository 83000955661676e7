/**
 * Regenerates the README's tables from their one source each, between marker
 * comments (`<!-- keys:start -->` … `<!-- keys:end -->`, and the same for
 * `errors` and `assumptions`):
 * - keys: the documented keys and accounts (`fixtures/demo-keys.ts`);
 * - errors: the error registry (`src/request/errors.ts`);
 * - assumptions: the assumption ledger (`src/assumptions.ts`), with the CLI
 *   flag of each option when the server has one (`src/cli/cli.ts`).
 *
 * `tsx scripts/docs.ts` rewrites README.md; `--check` changes nothing and
 * exits 1, naming the stale tables, when README.md is not up to date.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { DEFAULT_ACCOUNTS } from '../fixtures/demo-keys.ts'
import { LEDGER } from '../src/assumptions.ts'
import { USAGE } from '../src/cli/cli.ts'
import { ERROR_REGISTRY } from '../src/request/errors.ts'
import {
  PERSONA_RATE_LIMIT,
  PERSONA_SLOW_MS,
  type Persona,
} from '../src/model/personas.ts'

const README = new URL('../README.md', import.meta.url)

/** The generated tables, by marker name, and the file each one comes from. */
export const BLOCK_SOURCES = {
  keys: 'fixtures/demo-keys.ts',
  errors: 'src/request/errors.ts',
  assumptions: 'src/assumptions.ts',
} as const

/** The name of a generated block: `<!-- name:start -->` … `<!-- name:end -->`. */
export type BlockName = keyof typeof BLOCK_SOURCES

const cell = (text: string): string =>
  text.replace(/\|/g, '\\|').replace(/\n/g, ' ')

const table = (head: string[], rows: string[][]): string =>
  [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---|').join('')}`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n')

const PERSONA_TEXT: Record<Persona, string> = {
  'rate-limited': `${PERSONA_RATE_LIMIT.limit} call per ${PERSONA_RATE_LIMIT.windowSeconds} s of sandbox time, then \`429 rate_limited\``,
  slow: `every answer takes ${PERSONA_SLOW_MS / 1000} s`,
  unavailable: 'every call is `503 simulated_failure` with `Retry-After`',
  'expired-tokens':
    'the tokens it mints are already expired (`401 token_expired` on use)',
  'read-only':
    'it and its tokens lack `customers:write` (`403 insufficient_scope`)',
}

const kebab = (name: string): string =>
  name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)

/** The CLI flag the server's `--help` lists for a JavaScript option, if any. */
export function flagOf(option: string): string | undefined {
  return new RegExp(`--(?:no-)?${kebab(option)}(?![\\w-])`).exec(USAGE)?.[0]
}

/** The generated blocks of the README, by marker name. */
export function renderBlocks(): Record<BlockName, string> {
  const keys = DEFAULT_ACCOUNTS.flatMap((account) =>
    account.apiKeys.map((key) => [
      `\`${key.key}\``,
      `${cell(account.name)} (\`${account.id}\`)`,
      key.revoked
        ? 'revoked: always `401 invalid_credentials`'
        : key.persona
          ? `persona: ${PERSONA_TEXT[key.persona]}`
          : 'every scope',
    ]),
  )
  const errors = Object.entries(ERROR_REGISTRY).map(([code, e]) => [
    `\`${code}\``,
    String(e.status),
    cell(e.when),
    cell(e.trigger),
  ])
  const assumptions = LEDGER.map((item) => {
    const flag = item.option === null ? undefined : flagOf(item.option)
    return [
      `\`${item.id}\``,
      cell(item.interface),
      cell(item.default),
      item.option === null
        ? 'fixed'
        : `\`${item.option}\`${flag ? ` (\`${flag}\`)` : ''}`,
    ]
  })
  return {
    keys: table(['key', 'account', 'behaviour'], keys),
    errors: table(['code', 'status', 'when', 'how to trigger it'], errors),
    assumptions: table(
      ['id', 'the interface says', 'the sandbox does', 'option (CLI flag)'],
      assumptions,
    ),
  }
}

const blockPattern = (name: string): RegExp =>
  new RegExp(`(<!-- ${name}:start -->)[\\s\\S]*?(<!-- ${name}:end -->)`)

/** The README with every generated block brought up to date. */
export function renderReadme(current: string): string {
  let text = current
  for (const [name, block] of Object.entries(renderBlocks())) {
    const pattern = blockPattern(name)
    if (!pattern.test(text)) {
      throw new Error(
        `README.md has no <!-- ${name}:start --> … <!-- ${name}:end --> block for the table generated from ${BLOCK_SOURCES[name as BlockName]}.`,
      )
    }
    text = text.replace(
      pattern,
      (_, start: string, end: string) => `${start}\n${block}\n${end}`,
    )
  }
  return text
}

/** The blocks of `current` that differ from what their sources give now. */
export function staleBlocks(current: string): BlockName[] {
  const next = renderReadme(current)
  return (Object.keys(BLOCK_SOURCES) as BlockName[]).filter(
    (name) =>
      blockPattern(name).exec(current)?.[0] !==
      blockPattern(name).exec(next)?.[0],
  )
}

async function main(args: string[]): Promise<number> {
  const current = await readFile(README, 'utf8')
  if (args.includes('--check')) {
    const stale = staleBlocks(current)
    if (stale.length === 0) {
      console.log('README.md is up to date.')
      return 0
    }
    console.error(
      `README.md is stale: ${stale
        .map((name) => `the ${name} table differs from ${BLOCK_SOURCES[name]}`)
        .join('; ')}. Run \`npm run docs\` and commit README.md.`,
    )
    return 1
  }
  const next = renderReadme(current)
  if (next === current) {
    console.log('README.md is up to date.')
  } else {
    await writeFile(README, next)
    console.log(`Updated README.md: ${staleBlocks(current).join(', ')}.`)
  }
  return 0
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = await main(process.argv.slice(2))
  } catch (error) {
    console.error((error as Error).message)
    process.exitCode = 1
  }
}
