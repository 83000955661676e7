import { afterEach, expect, it } from 'vitest'
import { OPERATIONS } from '../handlers/index.ts'
import { DEMO_KEY_ONE } from '../fixtures/demo-keys.ts'
import { resolveOptions } from '../src/index.ts'
import { createOpenApiDocument } from '../src/contract.ts'
import { OPERATION_NAMES } from '../src/model/operations.ts'
import { targets, type Client } from './_targets.ts'

// What a new operation gets from its handler file and its one entry in
// handlers/index.ts: each check runs over the list, so it covers the new
// one without a line of its own.

const clients: Client[] = []
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close()
})

it('lists every operation once, under the names the scenarios and the journal use', () => {
  const names = OPERATIONS.map((spec) => spec.operation)
  expect(names).toEqual([...OPERATION_NAMES])
  expect(new Set(names).size).toBe(names.length)
  const routes = OPERATIONS.map((spec) => `${spec.method} ${spec.path}`)
  expect(new Set(routes).size).toBe(routes.length)
})

it('documents every operation under its path, method and name, with its tag', () => {
  const document = createOpenApiDocument(resolveOptions()) as {
    paths: Record<
      string,
      Record<string, { operationId: string; tags: string[] }>
    >
    tags: { name: string }[]
  }
  for (const spec of OPERATIONS) {
    const operation = document.paths[spec.path]?.[spec.method.toLowerCase()]
    expect(operation?.operationId, spec.operation).toBe(spec.operation)
    expect(operation?.tags).toEqual([spec.document.tag.name])
    expect(document.tags.map((tag) => tag.name)).toContain(
      spec.document.tag.name,
    )
  }
})

for (const target of targets) {
  for (const spec of OPERATIONS) {
    it(`routes ${spec.method} ${spec.path}: the document's example answers its documented success, journaled as ${spec.operation} (${target.name})`, async () => {
      const client = await target.start()
      clients.push(client)
      const example = spec.document.example?.(client.sandbox.options)
      // checkResponse (in the targets) holds every answer to the document.
      const response = await client.fetch(spec.path, {
        method: spec.method,
        headers: {
          Authorization: `Bearer ${DEMO_KEY_ONE}`,
          'Content-Type': 'application/json',
        },
        body: JSON.stringify(example),
      })
      expect(response.status).toBe(spec.document.success.status)
      expect(client.sandbox.journal.last()).toMatchObject({
        operation: spec.operation,
        path: spec.path,
        status: spec.document.success.status,
      })
    })

    it(`lets a scenario target ${spec.operation}, over HTTP and through the JavaScript API (${target.name})`, async () => {
      const client = await target.start()
      clients.push(client)
      const send = () =>
        client.fetch(spec.path, {
          method: spec.method,
          headers: {
            Authorization: `Bearer ${DEMO_KEY_ONE}`,
            'Content-Type': 'application/json',
          },
          body: JSON.stringify(spec.document.example?.(client.sandbox.options)),
        })
      const queued = await client.fetch('/__sandbox/scenarios', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ operation: spec.operation, status: 503 }),
      })
      expect(queued.status).toBe(201)
      client.sandbox.scenarios.next(spec.operation, { status: 502 })
      const first = await send()
      expect(first.status).toBe(503)
      expect(await first.json()).toMatchObject({ code: 'simulated_failure' })
      expect((await send()).status).toBe(502)
      expect((await send()).status).toBe(spec.document.success.status)
    })
  }
}
