import { expect, it } from 'vitest'
import { createOpenApiDocument } from '../../handlers/document.ts'
import { resolveOptions } from '../../src/options.ts'

// Spectral's `spectral:oas` rules (info-contact, operation-description) run
// on openapi.json in `npm run lint:openapi`; this guards the generator.
it('gives the document info.contact and every operation a description, with an admin token or without', () => {
  for (const adminToken of [undefined, 'admin-token-for-the-test']) {
    const document = createOpenApiDocument(
      resolveOptions({ adminToken }),
    ) as any
    expect(document.info.contact.name).toBeTruthy()
    const operations = Object.entries<any>(document.paths).flatMap(
      ([path, item]) =>
        Object.entries<any>(item).map(([method, op]) => ({
          at: `${method.toUpperCase()} ${path}`,
          description: op.description,
        })),
    )
    expect(operations.length).toBeGreaterThan(20)
    expect(operations.filter((op) => !op.description?.trim())).toEqual([])
  }
})
