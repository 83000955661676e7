import { expect, it } from 'vitest'
import { readJson } from '../../src/cli/bounded-body.ts'
import { startMisbehaving } from '../_misbehaving.ts'
import { verifyAgainst } from '../_servers.ts'

// Found by attacking verify from outside: a service that answered each
// create with valid JSON of arrays in arrays (8 MB, the default --max-body,
// or 7.8 KB gzipped) ran verify out of memory: each answer parsed into
// millions of arrays, kept for the report, and V8 ended the process
// (exit 134) after some forty calls, with no report. Answers nested deeper
// than 64 levels are not read as JSON now, and verify says so.

it('stops at an answer nested deeper than 64 levels, with a sentence and exit 3', async () => {
  const service = await startMisbehaving({ kind: 'deep', levels: 200_000 })
  const { exitCode, report } = await verifyAgainst(service.url)
  expect(exitCode).toBe(3)
  expect(report).toContain(
    'application/json, nested deeper than 64 levels, which verify does not read',
  )
})

it('reads JSON up to 64 levels deep, strings with brackets and escapes included', () => {
  const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`
  expect(readJson(deep(64)).json).toEqual(JSON.parse(deep(64)))
  expect(readJson(deep(65))).toEqual({
    json: undefined,
    unread: 'nested deeper than 64 levels',
  })
  const text = JSON.stringify({ name: `${'['.repeat(100)} \\" {`, n: [1] })
  expect(readJson(text).json).toEqual(JSON.parse(text))
  expect(readJson('not json')).toEqual({ json: undefined })
})
