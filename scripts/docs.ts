/**
 * Regenerates the README's tables from their one source each: the documented
 * keys (fixtures/demo-keys.ts), the error registry (src/errors.ts) and the
 * assumption ledger (src/assumptions.ts). `--check` fails when it is stale.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { DEFAULT_ACCOUNTS } from '../fixtures/demo-keys.ts'
import { LEDGER } from '../src/assumptions.ts'
import { ERROR_REGISTRY } from '../src/errors.ts'

const README = new URL('../README.md', import.meta.url)
const cell = (text: string): string =>
  text.replace(/\|/g, '\\|').replace(/\n/g, ' ')

const PERSONA_TEXT: Record<string, string> = {
  'rate-limited':
    'one call per minute of sandbox time, then `429 rate_limited`',
  slow: 'every answer takes 2 s',
  unavailable: 'every call is `503 simulated_failure` with `Retry-After`',
  'expired-tokens':
    'the tokens it mints are already expired (`401 token_expired` on use)',
  'read-only':
    'it and its tokens lack `customers:write` (`403 insufficient_scope`)',
}

/** The generated blocks of the README, by marker name. */
export function renderBlocks(): Record<string, string> {
  const keys = DEFAULT_ACCOUNTS.flatMap((account) =>
    account.apiKeys.map(
      (key) =>
        `| \`${key.key}\` | ${account.name} (\`${account.id}\`) | ${
          key.revoked
            ? 'revoked: always `401 invalid_credentials`'
            : key.persona
              ? `persona: ${PERSONA_TEXT[key.persona]}`
              : 'every scope'
        } |`,
    ),
  )
  const errors = Object.entries(ERROR_REGISTRY).map(
    ([code, e]) =>
      `| \`${code}\` | ${e.status} | ${cell(e.when)} | ${cell(e.trigger)} |`,
  )
  const assumptions = LEDGER.map(
    (item) =>
      `| \`${item.id}\` | ${cell(item.interface)} | ${cell(item.default)} | ${item.option ? `\`${item.option}\`` : 'fixed'} |`,
  )
  return {
    keys: ['| key | account | behaviour |', '|---|---|---|', ...keys].join(
      '\n',
    ),
    errors: [
      '| code | status | when | how to trigger it |',
      '|---|---|---|---|',
      ...errors,
    ].join('\n'),
    assumptions: [
      '| id | the interface says | the sandbox does | option |',
      '|---|---|---|---|',
      ...assumptions,
    ].join('\n'),
  }
}

/** The README with every generated block brought up to date. */
export function renderReadme(current: string): string {
  let text = current
  for (const [name, block] of Object.entries(renderBlocks())) {
    const pattern = new RegExp(
      `(<!-- ${name}:start -->)[\\s\\S]*?(<!-- ${name}:end -->)`,
    )
    if (!pattern.test(text))
      throw new Error(
        `README.md has no <!-- ${name}:start --> … <!-- ${name}:end --> block`,
      )
    text = text.replace(
      pattern,
      (_, start: string, end: string) => `${start}\n${block}\n${end}`,
    )
  }
  return text
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const current = await readFile(README, 'utf8')
  const next = renderReadme(current)
  if (process.argv.includes('--check')) {
    if (next !== current) {
      console.error('README.md is stale: run npm run docs')
      process.exitCode = 1
    }
  } else if (next !== current) {
    await writeFile(README, next)
    console.log('wrote README.md')
  }
}
