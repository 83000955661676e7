import { expect, it } from 'vitest'
import { send, targets, useClients } from '../_targets.ts'

// The idempotency store dropped expired keys oldest-first and stopped at the
// first live one, assuming keys expire in the order they were claimed. A
// key claimed after the clock was moved back expires before the ones
// claimed earlier, so once its window closed it still filled a place: a
// new key was refused with 409 limit_reached ("2 keys whose window is
// still open") while only one was.

for (const target of targets) {
  const start = useClients(target)

  it(`frees the place of a key that expired after the clock went back (${target.name})`, async () => {
    const client = await start({ idempotency: { maxEntriesPerAccount: 2 } })
    const { clock } = client.sandbox
    const create = (key: string) =>
      send(client, 'POST', '/v1/customers', {
        body: { name: 'Ada', email: 'ada@example.com' },
        headers: { 'idempotency-key': key },
      })
    clock.set(new Date('2030-01-10T00:00:00.000Z'))
    expect((await create('first')).status).toBe(201)
    clock.set(new Date('2030-01-01T00:00:00.000Z'))
    expect((await create('second')).status).toBe(201)
    // "second" expired, "first" (claimed on the 10th) is live until the 11th.
    clock.set(new Date('2030-01-02T00:00:00.000Z'))
    const third = await create('third')
    expect([third.status, third.body.code]).toEqual([201, undefined])
    const replay = await create('first')
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    // Both places are taken by live keys now.
    const fourth = await create('fourth')
    expect([fourth.status, fourth.body.code]).toEqual([409, 'limit_reached'])
  })
}
