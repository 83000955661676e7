import { expect, it } from 'vitest'
import { createSandbox } from '../../src/index.ts'

// sandbox.reset('2') (a seed read from a form or an environment variable,
// past TypeScript) was refused with "(got 2)", as if 2 were wrong. The
// message now shows what was given: the text "2".

it('shows a seed given as text as text when it refuses it', async () => {
  const sandbox = createSandbox()
  await sandbox.ready
  expect(() => sandbox.reset('2' as unknown as number)).toThrow(
    'the seed must be a whole number from 0 to 4294967295 (got "2")',
  )
  expect(() => sandbox.reset(-1)).toThrow('(got -1)')
})
