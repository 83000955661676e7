import type { RequestHandler } from 'msw'
import { describe, expectTypeOf, it } from 'vitest'
import {
  createSandbox,
  type CreateCustomerBody,
  type CreateTokenBody,
  type Customer,
  type ErrorCode,
  type JournalEntry,
  type Problem,
  type Sandbox,
  type SandboxOptions,
  type Token,
} from '../../src/index.ts'
import type { setupServer } from 'msw/node'
import {
  createSandboxServer,
  setupSandboxServer,
  type SandboxServer,
} from '../../src/runtimes/node-entry.ts'

describe('the public API', () => {
  it("sets up msw's own server with the sandbox handlers, onUnhandled a closed set", () => {
    const server = setupSandboxServer(createSandbox(), { onUnhandled: 'warn' })
    expectTypeOf(server).toEqualTypeOf<ReturnType<typeof setupServer>>()
    expectTypeOf(setupSandboxServer)
      .parameter(1)
      .toEqualTypeOf<
        { onUnhandled?: 'bypass' | 'warn' | 'error' } | undefined
      >()
  })
  it('creates a Sandbox whose handlers are MSW request handlers', () => {
    const sandbox = createSandbox()
    expectTypeOf(sandbox).toEqualTypeOf<Sandbox>()
    expectTypeOf(sandbox.handlers).toEqualTypeOf<RequestHandler[]>()
    expectTypeOf(sandbox.reset).returns.toEqualTypeOf<Promise<void>>()
    expectTypeOf(sandbox.journal.last()).toEqualTypeOf<
      JournalEntry | undefined
    >()
  })

  it('types the bodies of both operations', () => {
    expectTypeOf<Customer>().toEqualTypeOf<{
      id: string
      name: string
      email: string
    }>()
    expectTypeOf<Token['token_type']>().toEqualTypeOf<'Bearer'>()
    expectTypeOf<CreateTokenBody['scopes']>().toEqualTypeOf<string[]>()
    expectTypeOf<CreateTokenBody['expires_in']>().toEqualTypeOf<
      number | undefined
    >()
    expectTypeOf<CreateCustomerBody>().toHaveProperty('email')
  })

  it('accepts the documented options and refuses others', () => {
    expectTypeOf({
      seed: 1,
      rateLimit: { limit: 1, windowSeconds: 60 },
    }).toExtend<SandboxOptions>()
    // @ts-expect-error 'drop' is not a mode of unknownFields
    createSandbox({ unknownFields: 'drop' })
    // @ts-expect-error options are checked by name
    createSandbox({ seeds: 1 })
  })

  it('names every error code in one union', () => {
    expectTypeOf<'validation_failed'>().toExtend<ErrorCode>()
    expectTypeOf<'not_a_code'>().not.toExtend<ErrorCode>()
    expectTypeOf<Problem['code']>().toEqualTypeOf<ErrorCode>()
  })

  it('starts a server with a url and a close()', () => {
    expectTypeOf(createSandboxServer).returns.toEqualTypeOf<
      Promise<SandboxServer>
    >()
    expectTypeOf<SandboxServer['url']>().toEqualTypeOf<string>()
    expectTypeOf<SandboxServer['close']>().returns.toEqualTypeOf<
      Promise<void>
    >()
  })
})
