/**
 * Writes `fixtures/seed-locale.json`: the parts of Faker's English locale
 * that the seed reads (first and last names, company name patterns, the
 * internet definitions). Seeding with them gives exactly what the whole
 * English locale gives, for about a tenth of its size in the browser bundle.
 *
 * `npm run seed-locale` rewrites the file from the installed
 * @faker-js/faker; test/seed-locale.test.ts fails when it is stale.
 */
import { writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { en } from '@faker-js/faker'

/** The subset of `en` the seed uses, in a stable key order. */
export function seedLocale(): Record<string, unknown> {
  return {
    metadata: en.metadata,
    person: {
      first_name: en.person!.first_name,
      last_name: en.person!.last_name,
      last_name_pattern: en.person!.last_name_pattern,
    },
    company: {
      name_pattern: en.company!.name_pattern,
      legal_entity_type: en.company!.legal_entity_type,
    },
    internet: en.internet,
  }
}

export const SEED_LOCALE_FILE = new URL(
  '../fixtures/seed-locale.json',
  import.meta.url,
)

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(SEED_LOCALE_FILE, `${JSON.stringify(seedLocale())}\n`)
  console.log('Updated fixtures/seed-locale.json.')
}
