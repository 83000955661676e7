import { afterEach, expect, it, vi } from 'vitest'
import { createSandbox } from '../../src/index.ts'
import { DEMO_KEY_ONE } from '../../src/fixtures.ts'
import { runMain } from '../_servers.ts'

// With maxBodyBytes (--max-body-bytes) raised to 1 GiB, a body of about
// 600 MB was answered `400 invalid_json` "The request body is not valid
// UTF-8.": the body is read as one string, V8 makes none longer than
// 2^29 - 24 units, and every error of the decoder was taken for bad UTF-8.
// The option now stops at 256 MiB, refused above it at start; and a body
// the runtime cannot make a string of is `413 payload_too_large`, saying so.

const CEILING = 'must be a whole number from 1 to 268435456, not 1073741824'

afterEach(() => {
  vi.restoreAllMocks()
})

it('refuses maxBodyBytes above 256 MiB when the sandbox is made, naming the ceiling', () => {
  expect(() => createSandbox({ maxBodyBytes: 2 ** 30 })).toThrow(
    `Failed to create a sandbox: option "maxBodyBytes" ${CEILING}. See SandboxOptions for its type and default.`,
  )
  // Past the safe integers too: the bound it broke, not "of at least 1".
  expect(() => createSandbox({ maxBodyBytes: 2 ** 60 })).toThrow(
    'must be a whole number from 1 to 268435456, not 1152921504606847000.',
  )
  expect(() => createSandbox({ journalLimit: 1e20 })).toThrow(
    'must be a whole number from 1 to 9007199254740991, not 100000000000000000000.',
  )
  expect(createSandbox({ maxBodyBytes: 2 ** 28 }).options.maxBodyBytes).toBe(
    2 ** 28,
  )
})

it('refuses --max-body-bytes above 256 MiB at start, exit 2', async () => {
  const [stderr, code] = await runMain([
    '--port',
    '0',
    '--quiet',
    '--max-body-bytes',
    String(2 ** 30),
  ])
  expect(code).toBe(2)
  expect(stderr.split('\n')[0]).toBe(
    `customer-token-sandbox: --max-body-bytes ${CEILING}.`,
  )
})

const create = (body: BodyInit): Request =>
  new Request('http://localhost/v1/customers', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${DEMO_KEY_ONE}`,
      'content-type': 'application/json',
    },
    body,
  })

/** The error V8 itself throws for a string over its longest (nothing is allocated). */
const invalidStringLength = (): unknown => {
  try {
    return 'x'.repeat(2 ** 30)
  } catch (error) {
    return error
  }
}

// @note The decoder is made to fail as it does on a body of 2^29 bytes or
// more, where a test may not allocate one: Node throws an Error coded
// ERR_STRING_TOO_LONG, a browser's engine a RangeError.
it.each([
  [
    "Node's ERR_STRING_TOO_LONG",
    () =>
      Object.assign(
        new Error('Cannot create a string longer than 0x1fffffe8 characters'),
        { code: 'ERR_STRING_TOO_LONG' },
      ),
  ],
  ["the engine's RangeError", invalidStringLength],
])(
  'answers 413 payload_too_large for a body too long to be a string (%s), not "not valid UTF-8"',
  async (_, tooLong) => {
    const error = tooLong()
    expect(error).toBeInstanceOf(Error)
    const sandbox = createSandbox({ seed: 1, customersPerAccount: 0 })
    vi.spyOn(TextDecoder.prototype, 'decode').mockImplementationOnce(() => {
      throw error
    })
    const body = JSON.stringify({ name: 'Ada', email: 'ada@example.com' })
    const response = await sandbox.fetch(create(body))
    expect(response.status).toBe(413)
    const problem = (await response.json()) as { code: string; detail: string }
    expect(problem.code).toBe('payload_too_large')
    expect(problem.detail).toBe(
      `The request body (${body.length} bytes) is too large to read as text in this runtime.`,
    )
    expect(sandbox.customers.list()).toHaveLength(0)
  },
)

it('still answers 400 invalid_json for a body that is not UTF-8', async () => {
  const sandbox = createSandbox({ seed: 1, customersPerAccount: 0 })
  const response = await sandbox.fetch(
    create(new Uint8Array([0x7b, 0xff, 0x7d])),
  )
  expect(response.status).toBe(400)
  const problem = (await response.json()) as { code: string; detail: string }
  expect(problem.code).toBe('invalid_json')
  expect(problem.detail).toBe('The request body is not valid UTF-8.')
})
