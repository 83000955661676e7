/**
 * Regenerates the reference pages of `docs/reference/` from their one source
 * each. A hand-written page holds generated blocks between marker comments
 * (`<!-- keys:start -->` … `<!-- keys:end -->`); a generated page is written
 * whole:
 * - keys: the documented keys and accounts (`fixtures/demo-keys.ts`);
 * - assumptions: the assumption ledger (`src/assumptions.ts`), with the CLI
 *   flag of each option when the server has one (`src/cli/flags.ts`);
 * - options: every option's JSDoc summary, `@default` and `@example`, read
 *   from the options interfaces (`SandboxOptions` and the runtimes' own);
 * - usage: the CLI's `--help`, and that of `verify` and `record`;
 * - routes: every route of the HTTP surface, from the OpenAPI document;
 * - errors.md: the error catalogue (`src/model/error-registry.ts`), as
 *   `npm run openapi` writes it.
 *
 * `tsx scripts/docs.ts` rewrites the stale pages; `--check` changes nothing
 * and exits 1, naming the stale pages and blocks. `npm test` runs the check.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import packageJson from '../package.json' with { type: 'json' }
import { DEFAULT_ACCOUNTS } from '../fixtures/demo-keys.ts'
import { LEDGER } from '../src/assumptions.ts'
import { USAGE } from '../src/cli/cli.ts'
import { FLAG_TABLE } from '../src/cli/flags.ts'
import { RECORD_USAGE, VERIFY_USAGE } from '../src/cli/verify/cli.ts'
import { createOpenApiDocument } from '../handlers/document.ts'
import { resolveOptions } from '../src/options.ts'
import {
  PERSONA_RATE_LIMIT,
  PERSONA_SLOW_MS,
  type Persona,
} from '../src/model/personas.ts'
import { renderErrorCatalogue } from './openapi.ts'

const root = new URL('../', import.meta.url)

/** A generated block of a hand-written page, and the source it comes from. */
export interface Block {
  /** The page, from the repository's root. */
  file: string
  /** The marker name: `<!-- name:start -->` … `<!-- name:end -->`. */
  name: string
  source: string
  render: () => string | Promise<string>
}

/** A page generated whole, and the source it comes from. */
export interface Page {
  file: string
  source: string
  render: () => string
}

const cell = (text: string): string =>
  text.replace(/\|/g, '\\|').replace(/\n/g, ' ')

/** Inline code, fenced with enough backticks for the text it holds. */
const code = (text: string): string => {
  const fence = text.includes('`') ? '``' : '`'
  const pad = fence.length > 1 ? ' ' : ''
  return `${fence}${pad}${text}${pad}${fence}`
}

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

/**
 * The CLI flag of a JavaScript option of `createSandboxServer()` (and so of
 * `createSandbox()`), from the flag table: `--customers` for
 * `customersPerAccount`, `--no-v1-accepts-tokens` where `--help` lists the
 * negation; none for an option only a config file or the JavaScript API
 * sets, nor for a name the table gives a setting of the command line itself
 * (`quiet`: the server's log, no option of the JavaScript API).
 */
export function flagOf(option: string): string | undefined {
  const row = (
    FLAG_TABLE as Record<string, { flag?: string; target: string } | undefined>
  )[option]
  if (row === undefined || row.target === 'cli') return undefined
  const flag = row.flag
  if (flag === undefined) return undefined
  return USAGE.includes(`--no-${flag} `) ? `--no-${flag}` : `--${flag}`
}

function renderKeys(): string {
  const rows = DEFAULT_ACCOUNTS.flatMap((account) =>
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
  return table(['key', 'account', 'behaviour'], rows)
}

function renderAssumptions(): string {
  const rows = LEDGER.map((item) => {
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
  return table(
    ['id', 'the interface says', 'the sandbox does', 'option (CLI flag)'],
    rows,
  )
}

/**
 * The options interfaces the options page lists, in its order, and whether
 * the CLI's flags set their options: only the server's (and the sandbox's,
 * which it extends) do. An option of another interface lists no flag, even
 * when a flag's row bears its name.
 */
export const OPTION_INTERFACES = [
  ['src/options.ts', 'SandboxOptions', 'createSandbox(options)', true],
  [
    'src/runtimes/node.ts',
    'SandboxServerOptions',
    'createSandboxServer(options), beside every SandboxOptions',
    true,
  ],
  [
    'src/runtimes/browser.ts',
    'StartSandboxWorkerOptions',
    'startSandboxWorker(options), beside every SandboxOptions',
    false,
  ],
  ['src/runtimes/vite.ts', 'SandboxPluginOptions', 'sandbox(options)', false],
  [
    'src/runtimes/playwright.ts',
    'SandboxFixtureOptions',
    "Playwright's use: { … }",
    false,
  ],
] as const

const jsDocText = (
  comment: string | ts.NodeArray<ts.JSDocComment> | undefined,
): string =>
  typeof comment === 'string'
    ? comment
    : (comment?.map((part) => part.text).join('') ?? '')

/**
 * One row per property of `name` in `file`: its summary, default and
 * example, whether it is deprecated, and its CLI flag when `withFlags` (the
 * CLI sets this interface's options).
 */
export async function optionRows(
  file: string,
  name: string,
  withFlags: boolean,
  read: (path: string) => Promise<string> = (path) =>
    readFile(new URL(path, root), 'utf8'),
): Promise<string[][]> {
  const text = await read(file)
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const declaration = source.statements.find(
    (node): node is ts.InterfaceDeclaration =>
      ts.isInterfaceDeclaration(node) && node.name.text === name,
  )
  if (declaration === undefined) {
    throw new Error(`${file} declares no interface ${name}.`)
  }
  return declaration.members.filter(ts.isPropertySignature).map((member) => {
    const option = member.name.getText(source)
    const doc = ts
      .getJSDocCommentsAndTags(member)
      .find((node): node is ts.JSDoc => ts.isJSDoc(node))
    const tag = (tagName: string): string | undefined => {
      const found = doc?.tags?.find((t) => t.tagName.text === tagName)
      return found === undefined ? undefined : jsDocText(found.comment).trim()
    }
    const summary = jsDocText(doc?.comment).replace(/\s+/g, ' ').trim()
    const fallback = tag('default')
    // @note A tag's text runs to the next tag: prose written after
    // `@default` became the default's cell once (`store`). A default is one
    // line; anything longer is refused, not printed as a value.
    if (fallback?.includes('\n')) {
      throw new Error(
        `${file}: the @default of ${name}.${option} runs over more than one line ("${fallback.replace(/\s+/g, ' ').slice(0, 60)}…"); a default is one value: move the prose above the tags.`,
      )
    }
    const example = tag('example')
    const deprecated = tag('deprecated')?.replace(/\s+/g, ' ')
    const flag = withFlags ? flagOf(option) : undefined
    const what = [
      deprecated === undefined
        ? ''
        : `**Deprecated.**${deprecated ? ` ${deprecated}` : ''}`,
      summary,
      example === undefined ? '' : `E.g. ${code(example.replace(/\s+/g, ' '))}`,
    ]
    return [
      `\`${option}\``,
      fallback === undefined ? '' : cell(code(fallback)),
      flag === undefined ? '' : `\`${flag}\``,
      cell(what.filter(Boolean).join(' ')),
    ]
  })
}

async function renderOptions(): Promise<string> {
  const sections: string[] = []
  for (const [file, name, where, withFlags] of OPTION_INTERFACES) {
    const rows = await optionRows(file, name, withFlags)
    sections.push(
      `### ${name}\n\nFor ${code(where)}; declared in \`${file}\`.\n\n${table(['option', 'default', 'CLI flag', 'what it does'], rows)}`,
    )
  }
  return sections.join('\n\n')
}

function renderRoutes(): string {
  const document = createOpenApiDocument(
    resolveOptions(),
    packageJson.version,
  ) as {
    paths: Record<
      string,
      Record<
        string,
        { summary?: string; operationId?: string; security?: unknown[] }
      >
    >
  }
  const rows: string[][] = []
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (typeof operation !== 'object' || operation.summary === undefined)
        continue
      const guard = path.startsWith('/__sandbox/account/')
        ? "the account's API key"
        : path.startsWith('/__sandbox/') && path !== '/__sandbox/health'
          ? 'the admin token, when the server has one'
          : path.startsWith('/__sandbox/') || path === '/openapi.json'
            ? 'none'
            : 'an API key or a token'
      rows.push([
        `\`${method.toUpperCase()} ${path}\``,
        cell(operation.summary),
        operation.operationId === undefined
          ? ''
          : `\`${operation.operationId}\``,
        guard,
      ])
    }
  }
  return table(['call', 'what it does', 'operationId', 'credential'], rows)
}

const usage = (text: string): string => `\`\`\`text\n${text.trimEnd()}\n\`\`\``

/** Every generated block, by page. */
export const BLOCKS: readonly Block[] = [
  {
    file: 'docs/reference/keys.md',
    name: 'keys',
    source: 'fixtures/demo-keys.ts',
    render: renderKeys,
  },
  {
    file: 'docs/reference/assumptions.md',
    name: 'assumptions',
    source: 'src/assumptions.ts',
    render: renderAssumptions,
  },
  {
    file: 'docs/reference/cli.md',
    name: 'usage',
    source: 'src/cli/flags.ts',
    render: () => usage(USAGE),
  },
  {
    file: 'docs/reference/cli.md',
    name: 'verify-usage',
    source: 'src/cli/verify/cli.ts',
    render: () => usage(VERIFY_USAGE),
  },
  {
    file: 'docs/reference/cli.md',
    name: 'record-usage',
    source: 'src/cli/verify/cli.ts',
    render: () => usage(RECORD_USAGE),
  },
  {
    file: 'docs/reference/options.md',
    name: 'options',
    source: 'the options interfaces (src/options.ts, src/runtimes/*.ts)',
    render: renderOptions,
  },
  {
    file: 'docs/reference/http.md',
    name: 'routes',
    source: 'handlers/openapi.ts (the route table)',
    render: renderRoutes,
  },
]

/** Every page generated whole. */
export const PAGES: readonly Page[] = [
  {
    file: 'docs/reference/errors.md',
    source: 'src/model/error-registry.ts',
    render: renderErrorCatalogue,
  },
]

const blockPattern = (name: string): RegExp =>
  new RegExp(`(<!-- ${name}:start -->)[\\s\\S]*?(<!-- ${name}:end -->)`)

/** `current` with each of `blocks` (name → text) brought up to date. */
export function fillBlocks(
  file: string,
  current: string,
  blocks: Record<string, string>,
): string {
  let text = current
  for (const [name, block] of Object.entries(blocks)) {
    const pattern = blockPattern(name)
    if (!pattern.test(text)) {
      throw new Error(
        `${file} has no <!-- ${name}:start --> … <!-- ${name}:end --> block.`,
      )
    }
    text = text.replace(
      pattern,
      (_, start: string, end: string) => `${start}\n${block}\n${end}`,
    )
  }
  return text
}

/** Every generated page's text as it should be, by file. */
export async function renderPages(
  read: (path: string) => Promise<string> = (path) =>
    readFile(new URL(path, root), 'utf8'),
): Promise<Map<string, { text: string; sources: string[] }>> {
  const out = new Map<string, { text: string; sources: string[] }>()
  const byFile = new Map<string, Record<string, string>>()
  const sources = new Map<string, string[]>()
  for (const block of BLOCKS) {
    const blocks = byFile.get(block.file) ?? {}
    blocks[block.name] = await block.render()
    byFile.set(block.file, blocks)
    sources.set(block.file, [...(sources.get(block.file) ?? []), block.source])
  }
  for (const [file, blocks] of byFile) {
    out.set(file, {
      text: fillBlocks(file, await read(file), blocks),
      sources: [...new Set(sources.get(file))],
    })
  }
  for (const page of PAGES)
    out.set(page.file, { text: page.render(), sources: [page.source] })
  return out
}

async function main(args: string[]): Promise<number> {
  const check = args.includes('--check')
  const read = (file: string): Promise<string> =>
    readFile(new URL(file, root), 'utf8').catch(() => '')
  const stale: string[] = []
  for (const [file, { text, sources }] of await renderPages(read)) {
    if ((await read(file)) === text) continue
    stale.push(`${file} (from ${sources.join(', ')})`)
    if (!check) await writeFile(new URL(file, root), text)
  }
  if (stale.length === 0) {
    console.log('The generated docs are up to date.')
    return 0
  }
  if (check) {
    console.error(
      `Stale generated docs: ${stale.join('; ')}. Run \`npm run docs\` and commit them.`,
    )
    return 1
  }
  console.log(`Updated ${stale.join('; ')}.`)
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
