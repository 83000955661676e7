import { readFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { renderReadme } from '../scripts/docs.ts'
import { LEDGER } from '../src/assumptions.ts'
import { ERROR_REGISTRY } from '../src/errors.ts'

const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8')

it('has README tables that match the keys, the error registry and the ledger (run npm run docs when this fails)', () => {
  expect(readme).toBe(renderReadme(readme))
})

it('lists every assumption and every error code in the README', () => {
  for (const item of LEDGER) expect(readme).toContain(`\`${item.id}\``)
  for (const code of Object.keys(ERROR_REGISTRY))
    expect(readme).toContain(`\`${code}\``)
})

it('opens with the two commands', () => {
  const opening = readme.split('\n## ')[0]!
  expect(opening).toContain('npm ci && npm start')
  expect(opening).toContain('npm ci && npm test')
})
