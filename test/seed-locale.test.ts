import { readFile } from 'node:fs/promises'
import { base, en, Faker } from '@faker-js/faker'
import { expect, it } from 'vitest'
import {
  createFaker,
  seedAccountName,
  seedCustomers,
} from '../fixtures/seed.ts'
import { SEED_LOCALE_FILE, seedLocale } from '../scripts/seed-locale.ts'

it('keeps fixtures/seed-locale.json equal to the installed Faker (npm run seed-locale)', async () => {
  const committed: unknown = JSON.parse(
    await readFile(SEED_LOCALE_FILE, 'utf8'),
  )
  expect(committed).toEqual(seedLocale())
})

it.each([0, 1, 7, 4_294_967_295])(
  'seeds the same customers and account names as the whole English locale, seed %i',
  (seed) => {
    const whole = new Faker({ locale: [en, base], seed })
    const subset = createFaker(seed)
    expect([...seedCustomers(subset, 300)]).toEqual([
      ...seedCustomers(whole, 300),
    ])
    expect(seedAccountName(subset)).toBe(seedAccountName(whole))
  },
)
