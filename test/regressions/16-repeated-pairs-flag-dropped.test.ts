import { expect, it } from 'vitest'
import { readCommandLine } from '../../src/cli/cli.ts'

// `--limits records=5 --limits accounts=3` kept only the last flag: the
// records limit went back to its default without a word.
it('joins the pairs of a key=N flag given twice, the later winning for a key given in both', async () => {
  const { options } = await readCommandLine(
    [
      '--limits',
      'records=5',
      '--limits',
      'accounts=3,records=7',
      '--idempotency',
      'ttlSeconds=60',
      '--idempotency',
      'maxEntries=9',
    ],
    {},
  )
  expect(options?.limits).toEqual({ records: 7, accounts: 3 })
  expect(options?.idempotency).toEqual({ ttlSeconds: 60, maxEntries: 9 })
})

it('still takes the last value of any other flag given twice', async () => {
  const { options } = await readCommandLine(['--seed', '1', '--seed', '2'], {})
  expect(options?.seed).toBe(2)
})
