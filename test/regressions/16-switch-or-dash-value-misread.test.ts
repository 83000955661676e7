import { expect, it } from 'vitest'
import { runMain } from '../_servers.ts'

/** The first line `main()` writes to stderr for `args`, and its exit code. */
async function refusal(args: string[]): Promise<[string, number | undefined]> {
  const [stderr, exitCode] = await runMain(args)
  return [stderr.split('\n')[0]!, exitCode]
}

// These said "--unique-email needs a value: --unique-email <value>", and a
// value given that way is then refused as a stray argument.
it.each([
  ['--unique-email=false', '--unique-email', 'unique-email'],
  ['--quiet=1', '--quiet', 'quiet'],
  ['--no-v1-accepts-tokens=true', '--v1-accepts-tokens', 'v1-accepts-tokens'],
])(
  'says that the switch %s takes no value and how to turn it on or off',
  async (arg, flag, name) => {
    const [line, code] = await refusal([arg, '--port', '0'])
    expect(code).toBe(2)
    expect(line).toBe(
      `customer-token-sandbox: ${flag} takes no value: write --${name} to turn it on or --no-${name} to turn it off`,
    )
  },
)

// These said "--port needs a value", though one was given.
it.each([
  [['--port', '-1'], '--port must be a whole number (got "-1")'],
  [['--seed', '-3'], '--seed must be a whole number (got "-3")'],
  [['--customers', '-5'], '--customers must be a whole number (got "-5")'],
  [['--port', '1', '--port', '-1'], '--port must be a whole number (got "-1")'],
])('names the value of %j instead of asking for one', async (args, message) => {
  const [line, code] = await refusal(args)
  expect(code).toBe(2)
  expect(line).toBe(`customer-token-sandbox: ${message}`)
})

it('shows how to give a value that starts with a dash', async () => {
  const [line, code] = await refusal([
    '--admin-token',
    '-starts-with-a-dash',
    '--port',
    '0',
  ])
  expect(code).toBe(2)
  expect(line).toBe(
    "customer-token-sandbox: --admin-token '-starts-with-a-dash': a value that starts with a dash is written --admin-token=-starts-with-a-dash",
  )
})

it('still asks for the value of a flag followed by another flag', async () => {
  const [line] = await refusal(['--seed', '--port', '0'])
  expect(line).toBe(
    'customer-token-sandbox: --seed needs a value: --seed <value>',
  )
})
