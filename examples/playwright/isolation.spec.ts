import { mkdir, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, test } from 'customer-token-sandbox/playwright'

// Four tests, each moving its own account's clock by a different amount and
// queueing a different fault; run with four workers, none sees another's.
const plans = [
  { hours: 1, status: 500 },
  { hours: 2, status: 502 },
  { hours: 5, status: 503 },
  { hours: 9, status: 504 },
]

/**
 * Waits until every test has reached this point, so that the four really run
 * at once. The repository's own test names the folder; a plain run skips it.
 */
async function rendezvous(stage: string, index: number): Promise<void> {
  const root = process.env.SANDBOX_EXAMPLE_RENDEZVOUS
  if (!root) return
  const dir = join(root, stage)
  await mkdir(dir, { recursive: true })
  await writeFile(join(dir, String(index)), '')
  await expect
    .poll(async () => (await readdir(dir)).length, { timeout: 60_000 })
    .toBe(plans.length)
}

for (const [index, { hours, status }] of plans.entries()) {
  test(`account ${index + 1}: clock +${hours} h, next customer ${status}`, async ({
    sandbox,
    request,
  }) => {
    // Every account starts at the same time, then moves by its own amount.
    await sandbox.clock.set('2030-01-01T00:00:00Z')
    const moved = await sandbox.clock.advance(hours * 3600 * 1000)
    expect(moved.toISOString()).toBe(
      new Date(Date.UTC(2030, 0, 1, hours)).toISOString(),
    )
    await sandbox.scenarios.next('createCustomer', { status })
    await rendezvous('set-up', index)

    // The token is stamped on this account's clock.
    const minted = await request.post(`${sandbox.url}/v2/tokens`, {
      headers: sandbox.headers,
      data: { scopes: ['customers:write'], expires_in: 600 },
    })
    expect(minted.status()).toBe(201)
    const token = await minted.json()
    expect(token.created_at).toBe(moved.toISOString())

    // This account's fault, and only its own, hits its next customer call.
    const create = () =>
      request.post(`${sandbox.url}/v1/customers`, {
        headers: { authorization: `Bearer ${token.token}` },
        data: { name: `Test ${index + 1}`, email: `t${index + 1}@example.com` },
      })
    const failed = await create()
    expect(failed.status()).toBe(status)
    expect((await failed.json()).code).toBe('simulated_failure')
    expect((await create()).status()).toBe(201)
    expect(await sandbox.scenarios.list()).toEqual([])

    // The token expires on this account's clock only.
    await sandbox.clock.advance(600 * 1000)
    const expired = await create()
    expect(expired.status()).toBe(401)
    expect((await expired.json()).code).toBe('token_expired')

    await rendezvous('called', index)
    // Nobody else moved this clock or made calls as this account.
    expect((await sandbox.clock.now()).getTime()).toBe(
      moved.getTime() + 600 * 1000,
    )
    const journal = await sandbox.journal.list()
    expect(journal.map((entry) => [entry.path, entry.status])).toEqual([
      ['/v1/customers', 401],
      ['/v1/customers', 201],
      ['/v1/customers', status],
      ['/v2/tokens', 201],
    ])
    expect(
      journal.every((entry) => entry.account_id === sandbox.accountId),
    ).toBe(true)
  })
}
